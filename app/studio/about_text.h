#pragma once
// Help > About: the version, the build's optional parts (and why one is missing) and the
// devices each backend found here, as rich text.
#include <QString>

namespace tmmu::studio {

// Probes the backends the first time (app::backend_statuses caches the answer).
QString aboutText();

} // namespace tmmu::studio
