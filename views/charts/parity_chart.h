#pragma once
// A GPU run against the CPU backend, step by step (issue 13's parity view): the NMSE of every
// step's logits on a log scale, the gate (1e-5 for f32 weights, 1e-3 for f16) as a line, and the
// steps whose argmax differs from the CPU's marked. It draws a BackendParity the Run panel
// computed; it never runs anything.
#include "runtime/backend_parity.h"

#include <QWidget>

#include <memory>

QT_BEGIN_NAMESPACE
class QChart;
class QLabel;
class QStackedLayout;
QT_END_NAMESPACE

namespace tmmu::views {

class ParityChart : public QWidget {
    Q_OBJECT
  public:
    explicit ParityChart(QWidget* parent = nullptr);

    // `backend` names the candidate ("vulkan"); `passes` is the verdict of the gate at NMSE
    // `gate`.
    void setParity(std::shared_ptr<const runtime::BackendParity> parity, const QString& backend,
                   double gate, bool passes);
    void showMessage(const QString& message);
    QChart* chart() const { return chart_; }
    QString caption() const;

  protected:
    void changeEvent(QEvent* event) override;

  private:
    void rebuild();

    std::shared_ptr<const runtime::BackendParity> parity_;
    QString backend_;
    double gate_ = 1e-5;
    bool passes_ = false;
    QChart* chart_;
    QLabel* caption_;
    QLabel* message_;
    QStackedLayout* stack_;
};

} // namespace tmmu::views
