#pragma once
// Colours for every view: the product's palette (report/palette.h, shared with the reports:
// Okabe & Ito's colour-blind-safe colours for roles, slots and marks) as QColor, plus chrome
// colours for light or dark window backgrounds so the views follow the system theme.
#include "ir/graph.h"
#include "plan/plan.h"

#include <QColor>
#include <QPalette>

namespace tmmu::views {

class ViewPalette {
  public:
    // Reads QGuiApplication::palette(): dark when the window colour is dark.
    static ViewPalette fromApplication();
    explicit ViewPalette(bool dark);

    bool dark() const { return dark_; }
    QColor role(Role r) const;
    QColor slot(uint32_t slot) const;                     // cycles through the categorical palette
    QColor arena(const Plan& plan, uint32_t arena) const; // its dominant role's colour
    QColor background() const;                            // plot area
    QColor grid() const;
    QColor text() const;
    QColor selection() const;  // outline of the selected tensor
    QColor cursor() const;     // current-event line
    QColor lowerBound() const; // lower-bound line in layouts and charts
    QColor peak() const;       // peak line
    QColor more() const;       // a comparison's B uses more memory
    QColor less() const;       // ... or less
    QColor warning() const;    // an altered session
    QColor freeGap() const;    // free gaps at the current step

  private:
    bool dark_;
};

} // namespace tmmu::views
