"""The HIP plugin's embedded kernel source compiled by a real hiprtc (ROCm's libamdhip64.so.5 exports it;
Debian's 5.2 needs no GPU to compile), with the options the plugin passes (src/device/hip/kernels.cc), for
an architecture that has an embedded code object: the result must be an AMD GPU ELF defining exactly the
kernels of that embedded object. So the run-time compiled path (GPUs without an embedded object, e.g.
MI300X / gfx942) is checked by a real compiler, not only by the fake runtime.

usage: real_hiprtc.py KERNELS_RTC_HIP EMBEDDED_GFX90A_HSACO   (exit 77: no hiprtc on this machine)
"""
import ctypes
import subprocess
import sys


def kernel_symbols(path):
    out = subprocess.run(["readelf", "-Ws", path], check=True, capture_output=True, text=True).stdout
    return sorted({f.split()[7] for f in out.splitlines() if len(f.split()) >= 8 and "GLOBAL" in f
                   and f.split()[7].startswith("hetccl_")})


def main():
    source_path, embedded_path = sys.argv[1], sys.argv[2]
    import os
    if not os.path.exists(source_path) or not os.path.exists(embedded_path):
        print(f"{source_path} or {embedded_path} not built in this build: skipped")
        return 77
    try:
        lib = ctypes.CDLL("libamdhip64.so.5")
        lib.hiprtcCreateProgram
    except (OSError, AttributeError) as e:
        print(f"no hiprtc (libamdhip64.so.5) here: {e}: skipped")
        return 77
    prog = ctypes.c_void_p()
    source = open(source_path, "rb").read()
    rc = lib.hiprtcCreateProgram(ctypes.byref(prog), source, b"kernels_rtc.hip", 0, None, None)
    if rc != 0:
        print(f"hiprtcCreateProgram returned {rc}")
        return 1
    opts = [b"-O3", b"-std=c++17", b"--offload-arch=gfx90a"]
    rc = lib.hiprtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.hiprtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    lib.hiprtcGetProgramLog(prog, log)
    if rc != 0:
        print(f"hiprtcCompileProgram returned {rc}:\n{log.value.decode(errors='replace')}")
        return 1
    lib.hiprtcGetCodeSize(prog, ctypes.byref(size))
    code = ctypes.create_string_buffer(size.value)
    lib.hiprtcGetCode(prog, code)
    out_path = source_path + ".gfx90a.co"
    with open(out_path, "wb") as f:
        f.write(code.raw)
    header = subprocess.run(["readelf", "-h", out_path], check=True, capture_output=True, text=True).stdout
    if "AMD GPU" not in header or "gfx90a" not in header:
        print(f"not a gfx90a AMD GPU object:\n{header}")
        return 1
    want, got = kernel_symbols(embedded_path), kernel_symbols(out_path)
    if not want or want != got:
        print(f"kernels differ: embedded object {len(want)}, hiprtc {len(got)}; "
              f"missing {sorted(set(want) - set(got))[:10]}, extra {sorted(set(got) - set(want))[:10]}")
        return 1
    print(f"hiprtc compiled the embedded source for gfx90a: {size.value} bytes, {len(got)} kernel symbols as the "
          "embedded object")
    return 0


if __name__ == "__main__":
    sys.exit(main())
