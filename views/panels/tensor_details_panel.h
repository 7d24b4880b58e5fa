#pragma once
// Everything known about the selected tensor, as selectable rich text: placement (arena, slot,
// offset, size, alignment, the buffers sharing its bytes at other times), lifetime against the
// current event's step, and the graph around it (producer with its attributes where the source has
// them, consumers, alias group, view base, in-place target); an ONNX model's shapes name their
// symbolic dims. Links move the context: "step:N" moves the cursor to the event at step N,
// "tensor:N" selects another planned tensor.
#include <QWidget>

#include <string>
#include <unordered_map>
#include <vector>

class QTextBrowser;
class QUrl;

namespace tmmu {
struct Graph;
struct Node;
struct PlannedTensor;
} // namespace tmmu

namespace tmmu::views {

class PlanContext;

class TensorDetailsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit TensorDetailsPanel(PlanContext* ctx, QWidget* parent = nullptr);

    QTextBrowser* browser() const { return browser_; }
    QString plainText() const;

  protected:
    void changeEvent(QEvent* event) override; // re-colours on a palette (light/dark) change

  private:
    void planChanged();
    void refresh();
    void followLink(const QUrl& url);
    QString html(int planned) const;
    QString graphRows(int planned, const Graph& g) const;
    // The buffers whose bytes overlap the tensor's own bytes (at other times), as links.
    QString sharingRow(const PlannedTensor& t) const;
    // What the shown plan was made of when it has no graph (the source's description, such as
    // "lazy program 'mlp': 17 pool buffers over 88 events"), escaped.
    QString noGraphReason() const;
    QString nodeLink(const Graph& g, uint32_t node) const;
    QString tensorLink(const Graph& g, uint32_t tensor) const;
    QString stepLink(uint64_t step) const;
    QString muted() const; // colour name for labels and secondary text

    PlanContext* ctx_;
    QTextBrowser* browser_;
    std::unordered_map<std::string, uint64_t> stepOfNode_; // node id -> step in this plan
    std::vector<QString> opAtStep_;                        // opcode of the node at each step
};

} // namespace tmmu::views
