// Stopping on SIGINT/SIGTERM (Note [Stop on a signal]).
#pragma once

namespace cohort {

// Note [Stop on a signal]
// A training job asked to stop (Ctrl-C, a scheduler's SIGTERM before preemption) should not lose
// its work. The handlers installed here only record the signal; the fit loop polls StopSignal()
// after each step, and the workers of a job agree on the step to stop at (one rank may get the
// signal a step later than another, or alone), write a checkpoint and exit 128 + signal. A
// signal during validation stops it at the next batch, and the checkpoint is the epoch's end.
// A second signal ends the process at once with that code, for a step that never finishes.
void InstallStopSignalHandlers();
// The first SIGINT or SIGTERM received since the handlers were installed, or 0.
int StopSignal();
// Forgets a received signal (tests).
void ClearStopSignal();

}  // namespace cohort
