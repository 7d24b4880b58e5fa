#pragma once
// What the token/effect engine looked like at the context's current event: the event itself
// (key, site, tokens and values in and out with the events that made them, the rule that
// ordered it), every loc's commit and logical versions, every BaseId's commit version, the
// pool's buffers (live, pending release, acquirable), and pool memory over events.
#include <QWidget>

#include <memory>

class QLabel;
class QTreeWidget;

namespace tmmu::lazy {
struct Trace;
}

namespace tmmu::views {

class EventMemoryChart;
class PlanContext;

class LazyStatePanel : public QWidget {
    Q_OBJECT
  public:
    explicit LazyStatePanel(PlanContext* ctx, QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const lazy::Trace> trace);

    QLabel* eventLabel() const { return event_; }
    QTreeWidget* locs() const { return locs_; }
    QTreeWidget* bases() const { return bases_; }
    QTreeWidget* buffers() const { return buffers_; }
    EventMemoryChart* memoryChart() const { return memory_; }

  private:
    void showEvent(uint64_t event);

    PlanContext* ctx_;
    std::shared_ptr<const lazy::Trace> trace_;
    QLabel* event_;
    QTreeWidget* locs_;
    QTreeWidget* bases_;
    QTreeWidget* buffers_;
    EventMemoryChart* memory_;
};

} // namespace tmmu::views
