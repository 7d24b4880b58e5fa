#pragma once
// Plan > Run iterations for an IR graph with a shape envelope or a transformer config (seed 000
// II.H): the shapes of the iterations to run, one per line, as `tmmu plan --iteration` takes
// them ("seq=512", "batch=2,seq=1024"). It shows the envelope, the replan policy and the
// command line.
//
// Invariant: iterations() is what the lines say only once accept() checked every line (the
// parse of --iteration, then each binding against the envelope, naming the iteration by its
// number from 0, as the run's table and tmmu plan do); what it refuses keeps the dialog open
// with the message shown.
#include "ir/dynamic_dims.h"

#include <QDialog>
#include <QString>

#include <vector>

QT_BEGIN_NAMESPACE
class QLabel;
class QPlainTextEdit;
QT_END_NAMESPACE

namespace tmmu::studio {

class IterationsDialog : public QDialog {
    Q_OBJECT
  public:
    // `model`: a graph whose dims the lines are checked against (the graph as shown, bound);
    // `envelope`: what the dialog says of them; `lines`: the text to start from.
    IterationsDialog(const QString& modelName, const Graph& model, const QString& envelope,
                     const QString& lines, QWidget* parent = nullptr);

    std::vector<DimBinding> iterations() const { return iterations_; }
    QString lines() const; // as typed, to offer next time

    // For tests: the lines, the command line shown and the validation message.
    QPlainTextEdit* linesEdit() const { return lines_; }
    QLabel* commandLabel() const { return command_; }
    QLabel* errorLabel() const { return error_; }

  public slots:
    void accept() override;

  private:
    QStringList packedLines() const;
    void linesChanged();

    Graph model_;
    QPlainTextEdit* lines_;
    QLabel* command_;
    QLabel* error_;
    std::vector<DimBinding> iterations_;
};

} // namespace tmmu::studio
