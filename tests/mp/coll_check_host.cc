// coll_check on host memory (see coll_check.cc).
#include "checks.hpp"

int main(int argc, char** argv) {
  hetccl::test::HostSpace host;
  return hetccl::test::runCollCheck(argc, argv, host);
}
