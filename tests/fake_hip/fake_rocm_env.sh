# Sourced by the fake-HIP test scripts after they set `build`: points the HIP plugin at the fake runtime
# (libhetccl-fakehip.so, installed as the libamdhip64.so.7 that the plugin and the test programs dlopen).
# Exits 77 (skipped) when the build has no HIP plugin or fake runtime, or lacks any program named in
# FAKE_ROCM_NEEDS (paths).
fake="$build/tests/fake_hip/libhetccl-fakehip.so"
for f in "$build/libhetccl-hip.so" "$fake" ${FAKE_ROCM_NEEDS:-}; do
  [[ -e $f ]] || { echo "no $f in this build: skipped"; exit 77; }
done
mkdir -p "$build/fake_rocm"
ln -sfn "$fake" "$build/fake_rocm/libamdhip64.so.7"
export LD_LIBRARY_PATH="$build/fake_rocm${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HETCCL_HIP_PLUGIN="$build/libhetccl-hip.so" HETCCL_HIPRTC_LIB="$build/fake_rocm/libamdhip64.so.7"
