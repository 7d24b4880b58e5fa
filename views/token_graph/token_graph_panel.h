#pragma once
// The token graph view with its search field (Enter: next match, Shift+Enter: previous), a fit
// button and a legend of what the colours and line styles mean.
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;

namespace tmmu::lazy {
struct Trace;
}

namespace tmmu::views {

class PlanContext;
class TokenGraphView;

class TokenGraphPanel : public QWidget {
    Q_OBJECT
  public:
    explicit TokenGraphPanel(PlanContext* ctx, QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const lazy::Trace> trace);
    TokenGraphView* view() const { return view_; }
    QLineEdit* searchField() const { return search_; }
    QLabel* matchesLabel() const { return matches_; }

  private:
    void updateMatches();
    TokenGraphView* view_;
    QLineEdit* search_;
    QLabel* matches_;
};

} // namespace tmmu::views
