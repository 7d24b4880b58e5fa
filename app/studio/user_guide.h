#pragma once
// Help > User guide: resources/docs/user-guide.md (installed with the resources), shown as
// rendered Markdown with its screenshots; links to the other docs open in the same window,
// web links in the browser.
#include <QString>

class QWidget;

namespace tmmu::studio {

QString user_guide_path();

// Opens the guide in a window of its own (objectName "userGuide"), or a message saying where it
// was looked for when it is missing. Returns the window shown.
QWidget* show_user_guide(QWidget* parent);

} // namespace tmmu::studio
