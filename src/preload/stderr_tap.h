#pragma once

namespace firstassert {

// From now on, what the process writes to stderr is also read for the driver's device assertion lines.
void start_stderr_tap();

}  // namespace firstassert
