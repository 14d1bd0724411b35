// The target that compiles the tests' precompiled header (tests/CMakeLists.txt, hetccl_test_pch): an
// executable like every gtest binary that reuses it, so its flags (-fPIE, the sanitizers) are theirs.
int main() { return 0; }
