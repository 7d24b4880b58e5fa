#pragma once
// The product's colours, in one place and free of Qt, so reports and the studio look the same:
// the report charts draw with these values and the studio's ViewPalette (views/style) converts
// them to QColor, adding only its dark-theme chrome.
//
// The categorical colours are Okabe & Ito's (2008), told apart under the common colour-vision
// deficiencies.
#include "ir/graph.h"
#include "plan/plan.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tmmu::sessions::report {

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

inline constexpr std::array<Rgb, 8> kOkabeIto{{
    {0xE6, 0x9F, 0x00}, // orange
    {0x56, 0xB4, 0xE9}, // sky blue
    {0x00, 0x9E, 0x73}, // bluish green
    {0xF0, 0xE4, 0x42}, // yellow
    {0x00, 0x72, 0xB2}, // blue
    {0xD5, 0x5E, 0x00}, // vermillion
    {0xCC, 0x79, 0xA7}, // reddish purple
    {0x99, 0x99, 0x99}, // grey
}};

// Parameters blue, inputs sky blue, outputs reddish purple, activations orange, gradients
// bluish green, optimizer state vermillion, workspace grey.
Rgb role_color(Role r);
// Slot colouring cycles through the seven colours that are not grey.
inline constexpr size_t kSlotColors = 7;
Rgb slot_color(uint32_t slot);

// An arena's colour in memory charts: the colour of the role most of its tensors have
// (dominant_role), so arenas match the role colouring of the layouts; else its slot colour.
Rgb arena_color(const Plan& plan, uint32_t arena);
// a blended toward b by t in [0, 1] (fills: a colour toward the paper).
Rgb blend(Rgb a, Rgb b, double t);
// "#rrggbb", for SVG and CSS.
std::string css_color(Rgb c);

// Marks on every chart and layout.
inline constexpr Rgb kPeakColor = kOkabeIto[6];       // plan height (peak)
inline constexpr Rgb kLowerBoundColor = kOkabeIto[2]; // lower bound
inline constexpr Rgb kCursorColor = kOkabeIto[5];     // current event
inline constexpr Rgb kMoreColor = kOkabeIto[5];       // a comparison's B uses more memory
inline constexpr Rgb kLessColor = kOkabeIto[2];       // ... or less
inline constexpr Rgb kWarningColor = kOkabeIto[5];    // an altered session

// Light-theme chrome (reports are always light; the studio switches for dark themes).
inline constexpr Rgb kInk{0x20, 0x20, 0x20};   // text and the high-water line
inline constexpr Rgb kPaper{0xFF, 0xFF, 0xFF}; // plot background
inline constexpr Rgb kGridLine{0xE4, 0xE4, 0xE4};
inline constexpr Rgb kAxisGrey{0x78, 0x78, 0x78};

} // namespace tmmu::sessions::report
