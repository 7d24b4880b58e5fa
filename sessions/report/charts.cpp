#include "report/charts.h"

#include "core/units.h"
#include "plan/memory_series.h"
#include "plan/plan_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace tmmu::sessions::report {

namespace {

// Maps plan time and bytes to canvas coordinates inside the plot box (bytes grow upwards).
struct Axes {
    Box plot;
    double t0 = 0, t1 = 1, ymax = 1;
    double x(double t) const { return plot.x + (t - t0) / (t1 - t0) * plot.w; }
    double y(double bytes) const { return plot.y + plot.h - bytes / ymax * plot.h; }
};

Axes make_axes(const Plan& plan, const Box& area, double ymax) {
    Axes a;
    a.plot = {area.x + 64, area.y + 22, std::max(10.0, area.w - 74), std::max(10.0, area.h - 38)};
    const auto& times = plan.series.times;
    if (!times.empty()) a.t0 = double(times.front());
    a.t1 = std::max(a.t0 + 1, double(plan_time_end(plan)));
    a.ymax = std::max(1.0, ymax);
    return a;
}

void draw_frame(Canvas& c, const Axes& a, const char* x_label) {
    for (int i = 0; i <= 4; ++i) {
        double bytes = a.ymax * i / 4;
        double y = a.y(bytes);
        c.line({a.plot.x, y}, {a.plot.x + a.plot.w, y}, i ? kGridLine : kAxisGrey, 0.5);
        if (i % 2 == 0)
            c.text({a.plot.x - 4, y + 3}, format_bytes(uint64_t(std::llround(bytes))), 8, kAxisGrey,
                   Anchor::End);
    }
    double base = a.plot.y + a.plot.h;
    c.line({a.plot.x, a.plot.y}, {a.plot.x, base}, kAxisGrey, 0.5);
    c.text({a.plot.x, base + 11}, fmt::format("{}", uint64_t(a.t0)), 8, kAxisGrey, Anchor::Start);
    c.text({a.plot.x + a.plot.w, base + 11}, fmt::format("{}", uint64_t(a.t1)), 8, kAxisGrey,
           Anchor::End);
    c.text({a.plot.x + a.plot.w / 2, base + 11}, x_label, 8, kAxisGrey, Anchor::Middle);
}

// Legend entries laid out right to left from the panel's top right corner.
struct Legend {
    Canvas& c;
    double right, y;
    void add(std::string_view label, Rgb color) {
        right -= text_width(label, 8) + 12; // swatch, gap, text
        c.rect({right, y - 7, 8, 8}, color);
        c.text({right + 11, y}, label, 8, kInk);
        right -= 18;
    }
};

// The series as a path, reduced to at most two points per output unit (downsample_max keeps
// each bucket's maximum, so peaks survive).
std::vector<Point> series_path(const Axes& a, const std::vector<uint64_t>& times,
                               const std::vector<uint64_t>& values) {
    std::vector<Point> pts;
    const size_t buckets = size_t(std::max(1.0, std::ceil(a.plot.w)));
    for (const SeriesPoint& s : downsample_max(times, values, uint64_t(a.t1), buckets))
        pts.push_back({a.x(s.time), a.y(double(s.value))});
    return pts;
}

void title(Canvas& c, const Box& area, const std::string& text) {
    c.text({area.x, area.y + 10}, text, 10, kInk, Anchor::Start, true);
}

// Role of each buffer: its root tensor's (buffer_names holds the root's id).
std::vector<Role> buffer_roles(const Plan& plan, size_t arena) {
    const ArenaPlan& ap = plan.arenas[arena];
    std::vector<Role> roles(ap.problem.buffers.size(), Role::Activation);
    std::vector<bool> rooted(roles.size(), false);
    for (const PlannedTensor& t : plan.tensors) {
        if (t.arena != arena || t.buffer >= roles.size() || rooted[t.buffer]) continue;
        roles[t.buffer] = t.role;
        rooted[t.buffer] = t.buffer < ap.buffer_names.size() && ap.buffer_names[t.buffer] == t.id;
    }
    return roles;
}

// Coverage of the plot's unit cells by buffers too small to draw one by one, per role.
class CoverageGrid {
  public:
    explicit CoverageGrid(const Box& plot)
        : plot_(plot), cols_(size_t(std::ceil(plot.w))), rows_(size_t(std::ceil(plot.h))) {}

    void add(const Box& b, Role role) {
        if (cov_.empty()) cov_.assign(cols_ * rows_ * kRoleCount, 0.0f);
        double lx = b.x - plot_.x, ly = b.y - plot_.y;
        for (size_t c = cell(lx, cols_); c <= cell(lx + b.w, cols_); ++c) {
            double ox = overlap(double(c), lx, b.w);
            for (size_t r = cell(ly, rows_); r <= cell(ly + b.h, rows_); ++r)
                cov_[(c * rows_ + r) * kRoleCount + size_t(role)] +=
                    float(ox * overlap(double(r), ly, b.h));
        }
    }

    // Runs of cells at least a fifth covered, one rectangle per run of the same dominant role.
    void draw(Canvas& canvas) const {
        if (cov_.empty()) return;
        for (size_t c = 0; c < cols_; ++c) {
            size_t r = 0;
            while (r < rows_) {
                int role = dominant(c, r);
                size_t end = r + 1;
                while (role >= 0 && end < rows_ && dominant(c, end) == role)
                    ++end;
                if (role >= 0)
                    canvas.rect({plot_.x + double(c), plot_.y + double(r), 1, double(end - r)},
                                role_color(Role(role)));
                r = end;
            }
        }
    }

  private:
    static size_t cell(double v, size_t n) {
        return size_t(std::clamp(std::floor(v), 0.0, double(n - 1)));
    }
    static double overlap(double cell, double start, double len) {
        return std::max(0.0, std::min(cell + 1, start + len) - std::max(cell, start));
    }
    int dominant(size_t c, size_t r) const {
        const float* v = &cov_[(c * rows_ + r) * kRoleCount];
        float total = 0;
        size_t best = 0;
        for (size_t k = 0; k < kRoleCount; ++k) {
            total += v[k];
            if (v[k] > v[best]) best = k;
        }
        return total >= 0.2f ? int(best) : -1;
    }
    Box plot_;
    size_t cols_, rows_;
    std::vector<float> cov_; // [col][row][role]
};

} // namespace

std::vector<size_t> charted_arenas(const Plan& plan) {
    std::vector<size_t> out;
    for (size_t a = 0; a < plan.arenas.size(); ++a)
        if (!plan.arenas[a].problem.buffers.empty() && a < plan.series.live_bytes.size())
            out.push_back(a);
    return out;
}

void draw_memory_panel(Canvas& c, const Plan& plan, size_t arena, const Box& area) {
    const ArenaPlan& ap = plan.arenas[arena];
    const auto& live = plan.series.live_bytes[arena];
    const auto& high = plan.series.high_water[arena];
    uint64_t top = std::max(ap.metrics.peak_bytes, ap.metrics.lower_bound);
    for (uint64_t v : high)
        top = std::max(top, v);
    Axes a = make_axes(plan, area, double(top));
    title(c, area, ap.config.name + ": memory over time");
    // As in the studio's memory chart: live bytes in the arena's colour, high-water in ink.
    const Rgb live_color = arena_color(plan, uint32_t(arena));
    Legend legend{c, area.x + area.w, area.y + 10};
    legend.add("peak", kPeakColor);
    legend.add("lower bound", kLowerBoundColor);
    legend.add("high-water", kInk);
    legend.add("live bytes", live_color);

    std::vector<Point> live_path = series_path(a, plan.series.times, live);
    if (!live_path.empty()) {
        std::vector<Point> fill = live_path;
        double base = a.plot.y + a.plot.h;
        fill.push_back({live_path.back().x, base});
        fill.push_back({live_path.front().x, base});
        c.polygon(fill, blend(live_color, kPaper, 0.6));
    }
    draw_frame(c, a, "time step");
    c.polyline(series_path(a, plan.series.times, high), kInk, 1);
    c.polyline(live_path, live_color, 1);
    double lb = a.y(double(ap.metrics.lower_bound)), pk = a.y(double(ap.metrics.peak_bytes));
    c.line({a.plot.x, lb}, {a.plot.x + a.plot.w, lb}, kLowerBoundColor, 1, true);
    c.line({a.plot.x, pk}, {a.plot.x + a.plot.w, pk}, kPeakColor, 0.8);
}

void draw_layout_panel(Canvas& c, const Plan& plan, size_t arena, const Box& area) {
    const ArenaPlan& ap = plan.arenas[arena];
    Axes a = make_axes(plan, area, double(ap.metrics.peak_bytes));
    title(c, area, ap.config.name + ": layout (time x offset)");
    std::vector<Role> roles = buffer_roles(plan, arena);
    std::array<bool, kRoleCount> present{};
    for (Role r : roles)
        present[size_t(r)] = true;
    Legend legend{c, area.x + area.w, area.y + 10};
    legend.add("peak", kPeakColor);
    legend.add("lower bound", kLowerBoundColor);
    for (size_t r = kRoleCount; r-- > 0;)
        if (present[r]) legend.add(role_name(Role(r)), role_color(Role(r)));

    draw_frame(c, a, "time step");
    CoverageGrid grid(a.plot);
    std::vector<std::pair<Box, Role>> big;
    const auto& bufs = ap.problem.buffers;
    for (size_t b = 0; b < bufs.size(); ++b) {
        double off = double(ap.solution.offsets[b]), size = double(bufs[b].size);
        double x0 = a.x(double(bufs[b].begin)), x1 = a.x(double(bufs[b].end));
        Box box{x0, a.y(off + size), x1 - x0, a.y(off) - a.y(off + size)};
        if (box.w >= 0.5 && box.h >= 0.5)
            big.push_back({box, roles[b]});
        else
            grid.add(box, roles[b]);
    }
    grid.draw(c);
    for (const auto& [box, role] : big) {
        bool outline = box.w >= 3 && box.h >= 3;
        c.rect(box, role_color(role), outline ? std::optional<Rgb>(kPaper) : std::nullopt);
    }
    double lb = a.y(double(ap.metrics.lower_bound)), pk = a.y(double(ap.metrics.peak_bytes));
    c.line({a.plot.x, lb}, {a.plot.x + a.plot.w, lb}, kLowerBoundColor, 1, true);
    c.line({a.plot.x, pk}, {a.plot.x + a.plot.w, pk}, kPeakColor, 0.8);
}

} // namespace tmmu::sessions::report
