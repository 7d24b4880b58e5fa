#pragma once
// How the views write numbers: sizes as the CLI and the reports write them (format_bytes), and
// axis tick labels that stay distinct at every zoom.
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::views {

// "1.50 GiB", "384.00 MiB", "96 B": the engine's format_bytes, so the studio, the CLI and the
// reports print the same size the same way.
QString humanBytes(uint64_t bytes);
// Tick label of v on a grid of `step`: "950", "12.5k", "18.45k", "1.2M", with as many decimals
// as the step needs (falling back to the plain integer), so neighbouring ticks never read alike.
QString tickLabel(double v, double step);
// Byte tick label on a power-of-two grid `step` for an axis reaching `top`: in top's unit when
// two decimals show the step exactly ("10.5 GiB" on a 512 MiB grid), else in a smaller unit
// ("1088 MiB" on a 64 MiB grid), so neighbouring ticks never read alike.
QString byteTickLabel(uint64_t v, uint64_t step, uint64_t top);
// printf format for a QValueAxis with ticks `step` apart: as many decimals as the step needs
// ("%.0f" for 250, "%.1f" for 0.5), never an exponent ("1e+03").
QString axisLabelFormat(double step);
// "100,000".
QString groupedNumber(uint64_t v);
// "1 gap", "0 gaps", "1,024 tensors": the number grouped, the noun in the number it takes.
QString counted(uint64_t n, const char* one, const char* many);
// "2×3×224×224", "scalar" for no dims. With the symbolic name each dim was bound from (an ONNX
// model's annotations; "" for a fixed dim) as "N=2×3×224×224"; names of another length than the
// shape are ignored.
QString shapeText(const std::vector<int64_t>& shape, const std::vector<std::string>& dimNames = {});

} // namespace tmmu::views
