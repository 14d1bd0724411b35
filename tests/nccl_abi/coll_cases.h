/* The collective checks of coll_check (coll_cases.c). */
#ifndef HETCCL_TESTS_NCCL_ABI_COLL_CASES_H_
#define HETCCL_TESTS_NCCL_ABI_COLL_CASES_H_

#include "dropin_api.h"

/* Runs every collective on `comm` (rank `me` of `n`) with exact checks; failures are counted by
 * dropinFailures(). RCCL's extras run when the library exports them. */
void runCollectiveCases(const DropinApi* api, ncclComm_t comm, int me, int n);

#endif
