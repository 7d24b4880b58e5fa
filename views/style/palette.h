#pragma once
// Colours for every view: a colour-blind-safe categorical palette (Okabe & Ito, 2008) for roles
// and slots, adjusted for light or dark window backgrounds, plus chrome colours derived from the
// application palette so the views follow the system theme.
#include "ir/graph.h"

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
    QColor slot(uint32_t slot) const;      // cycles through the categorical palette
    QColor background() const;             // plot area
    QColor grid() const;
    QColor text() const;
    QColor selection() const;              // outline of the selected tensor
    QColor cursor() const;                 // current-step line
    QColor lowerBound() const;             // lower-bound line in layouts and charts
    QColor peak() const;                   // peak line
    QColor freeGap() const;                // free gaps at the current step

  private:
    bool dark_;
};

} // namespace tmmu::views
