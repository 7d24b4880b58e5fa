#include "models/transformer_config.h"

#include "core/failure.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

namespace tmmu {
namespace {

using nlohmann::json;

// Dimensions above this are not a real model; the cap keeps every product of two fields
// inside int64 so shape arithmetic below cannot overflow before finalize_graph checks bytes.
constexpr uint64_t kMaxField = uint64_t{1} << 32;

struct Reader {
    const json& obj;
    std::string_view origin;
    std::string_view path = ""; // "rope_scaling." for the fields of that object

    std::string where(std::string_view field) const {
        return std::string(origin) + " field '" + std::string(path) + std::string(field) + "'";
    }
    [[noreturn]] void bad(std::string_view field, const std::string& message) const {
        fail(FailureCode::InvalidIrShapes, where(field), message);
    }
    // A null value counts as absent: Hugging Face writes "n_inner": null for the default.
    bool has(std::string_view field) const {
        auto it = obj.find(std::string(field));
        return it != obj.end() && !it->is_null();
    }
    // Written as null, which some fields read as "none" rather than as their default.
    bool is_null(std::string_view field) const {
        auto it = obj.find(std::string(field));
        return it != obj.end() && it->is_null();
    }
    uint64_t positive(std::string_view field) const {
        if (!has(field)) bad(field, "missing required field");
        const json& v = obj.at(std::string(field));
        // nlohmann stores non-negative integers as unsigned, so a signed one is negative.
        if (!v.is_number_unsigned() || v.get<uint64_t>() == 0)
            bad(field, "expected a positive integer, got " + v.dump());
        uint64_t value = v.get<uint64_t>();
        if (value > kMaxField) bad(field, "value " + v.dump() + " is larger than 2^32");
        return value;
    }
    uint64_t positive_or(std::string_view field, uint64_t fallback) const {
        return has(field) ? positive(field) : fallback;
    }
    bool boolean_or(std::string_view field, bool fallback) const {
        if (!has(field)) return fallback;
        const json& v = obj.at(std::string(field));
        if (!v.is_boolean()) bad(field, "expected true or false, got " + v.dump());
        return v.get<bool>();
    }
    double positive_real(std::string_view field) const {
        if (!has(field)) bad(field, "missing required field");
        return positive_real_or(field, 0);
    }
    double positive_real_or(std::string_view field, double fallback) const {
        if (!has(field)) return fallback;
        const json& v = obj.at(std::string(field));
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            bad(field, "expected a positive number, got " + v.dump());
        return v.get<double>();
    }
    std::string string_or(std::string_view field, std::string fallback) const {
        if (!has(field)) return fallback;
        const json& v = obj.at(std::string(field));
        if (!v.is_string()) bad(field, "expected a string, got " + v.dump());
        return v.get<std::string>();
    }
    // Why `field` (absent: `fallback`) is not one of the `supported` values, if it is not.
    std::optional<std::string> unsupported(std::string_view field, std::string_view fallback,
                                           std::initializer_list<std::string_view> supported,
                                           std::string_view what) const {
        const std::string value = string_or(field, std::string(fallback));
        std::string names;
        for (std::string_view s : supported) {
            if (value == s) return std::nullopt;
            names += (names.empty() ? "\"" : ", \"") + std::string(s) + "\"";
        }
        return fmt::format("{} \"{}\" is not supported (supported: {})", what, value, names);
    }
    std::optional<std::string> unsupported_flag(std::string_view field, bool fallback,
                                                bool supported, std::string_view what) const {
        if (boolean_or(field, fallback) == supported) return std::nullopt;
        return fmt::format("{} is not supported (only {} = {})", what, field, supported);
    }
    // A field that changes the model's tensors: the config is refused.
    void refuse(std::string_view field, const std::optional<std::string>& why) const {
        if (why) bad(field, *why);
    }
    // A field that changes only what the kernels compute: memory plans as usual, and
    // compile_transformer refuses the config (the first such field) instead of running it as
    // the default model.
    void mark_unrunnable(std::string_view field, const std::optional<std::string>& why,
                         TransformerConfig& c) const {
        if (why && !c.unrunnable) c.unrunnable = TransformerConfig::Unrunnable{where(field), *why};
    }
};

std::string stem_of(std::string_view origin) {
    auto slash = origin.find_last_of("/\\");
    std::string_view base = slash == std::string_view::npos ? origin : origin.substr(slash + 1);
    auto dot = base.rfind('.');
    if (dot != std::string_view::npos && dot > 0) base = base.substr(0, dot);
    return std::string(base);
}

using Variant = TransformerConfig::Variant;

std::optional<Variant> detect_variant(const Reader& r) {
    const std::string model_type = r.string_or("model_type", "");
    for (const Variant v : {Variant::Gpt2, Variant::Llama, Variant::Mistral, Variant::Qwen2})
        if (model_type == variant_name(v)) return v;
    // Gemma, Phi, ... have Llama's field names but other tensors or norms: their fields alone
    // must not make them Llama.
    if (!model_type.empty()) return std::nullopt;
    if (r.has("n_embd")) return Variant::Gpt2;
    if (r.has("hidden_size")) return Variant::Llama;
    return std::nullopt;
}

void read_gpt2(const Reader& r, TransformerConfig& c) {
    c.n_layer = r.positive("n_layer");
    c.hidden = r.positive("n_embd");
    c.n_head = r.positive("n_head");
    c.n_kv_head = c.n_head;
    c.vocab = r.positive("vocab_size");
    // n_ctx is the legacy spelling of n_positions in early GPT-2 configs.
    c.max_positions =
        r.has("n_positions") || !r.has("n_ctx") ? r.positive("n_positions") : r.positive("n_ctx");
    c.intermediate = r.positive_or("n_inner", 4 * c.hidden);
    c.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
    c.norm_eps = r.positive_real_or("layer_norm_epsilon", 1e-5);
    // The tanh approximation of GELU is what every backend computes (gelu_new in transformers).
    r.mark_unrunnable("activation_function",
                      r.unsupported("activation_function", "gelu_new",
                                    {"gelu_new", "gelu_pytorch_tanh"}, "activation"),
                      c);
    r.mark_unrunnable("scale_attn_weights",
                      r.unsupported_flag("scale_attn_weights", true, true,
                                         "attention without the 1/sqrt(d) scale"),
                      c);
    r.mark_unrunnable("scale_attn_by_inverse_layer_idx",
                      r.unsupported_flag("scale_attn_by_inverse_layer_idx", false, false,
                                         "attention scaled by the layer's index"),
                      c);
    r.refuse("add_cross_attention",
             r.unsupported_flag("add_cross_attention", false, false, "cross-attention"));
}

// A scaling number as the runtime carries it (AttentionParams: 32-bit floats): positive and
// finite there too.
double scaling_number(const Reader& scaling, std::string_view field) {
    const double v = scaling.positive_real(field);
    if (!std::isfinite(float(v)) || float(v) <= 0)
        scaling.bad(field, fmt::format("{} does not fit the runtime's 32-bit floats", v));
    return v;
}

RopeScaling read_scaling_numbers(const Reader& scaling, std::string_view type) {
    RopeScaling s;
    if (type == "linear") {
        s.kind = RopeScaling::Kind::Linear;
        s.factor = scaling_number(scaling, "factor");
    } else if (type == "llama3") {
        s.kind = RopeScaling::Kind::Llama3;
        s.factor = scaling_number(scaling, "factor");
        s.low_freq_factor = scaling_number(scaling, "low_freq_factor");
        s.high_freq_factor = scaling_number(scaling, "high_freq_factor");
        s.original_max_positions = scaling.positive("original_max_position_embeddings");
        // The blend between the two divides by their difference (in floats, as it is run).
        if (!(float(s.high_freq_factor) > float(s.low_freq_factor)))
            scaling.bad("high_freq_factor",
                        fmt::format("{} must be greater than low_freq_factor {}",
                                    s.high_freq_factor, s.low_freq_factor));
    }
    return s;
}

// RoPE scaling changes every rotation angle, not the tensors. The runtime computes "linear" and
// Llama 3's "llama3" (runtime/rope.h), and "default"; any other type, or numbers a scaling
// cannot run with, mark the config unrunnable: its memory still plans.
void read_rope_scaling(const Reader& r, TransformerConfig& c) {
    if (!r.has("rope_scaling")) return;
    const json& v = r.obj.at("rope_scaling");
    if (!v.is_object()) r.bad("rope_scaling", "expected an object or null, got " + v.dump());
    const Reader scaling{v, r.origin, "rope_scaling."};
    // transformers reads "rope_type", and "type" in configs written before it was renamed.
    const std::string_view key = scaling.has("rope_type") ? "rope_type" : "type";
    const std::string type = scaling.string_or(key, "default");
    scaling.mark_unrunnable(
        key, scaling.unsupported(key, "default", {"default", "linear", "llama3"}, "RoPE scaling"),
        c);
    try {
        c.rope_scaling = read_scaling_numbers(scaling, type);
    } catch (const Failure& f) {
        if (!c.unrunnable) c.unrunnable = TransformerConfig::Unrunnable{f.where(), f.message()};
    }
}

// A window of `sliding_window` positions (absent: `fallback`; null: none), kept where it is
// shorter than the model's context.
void read_sliding_window(const Reader& r, uint64_t fallback, TransformerConfig& c) {
    if (r.is_null("sliding_window")) return;
    const uint64_t window = r.positive_or("sliding_window", fallback);
    if (window >= c.max_positions) return;
    c.sliding_window = window;
    c.sliding_window_where = r.where("sliding_window");
}

// What the variants add to Llama's tensors and attention. Every bias is planned as the
// model's tensor; the runtime's Llama blocks add q, k and v's only, so the others make the
// config unrunnable.
void read_variant_fields(const Reader& r, TransformerConfig& c) {
    switch (c.variant) {
    case Variant::Qwen2:
        c.qkv_bias = true;
        // transformers' Qwen2: the window, when used, is on the layers from max_window_layers.
        if (r.boolean_or("use_sliding_window", false) &&
            r.positive_or("max_window_layers", 28) < c.n_layer)
            read_sliding_window(r, 4096, c);
        return;
    case Variant::Mistral:
        read_sliding_window(r, 4096, c); // transformers' MistralConfig default
        return;
    case Variant::Llama:
        c.qkv_bias = c.o_bias = r.boolean_or("attention_bias", false);
        c.mlp_bias = r.boolean_or("mlp_bias", false);
        if (c.o_bias) // q, k and v's the runtime adds, as Qwen2's; the output's it has not
            r.mark_unrunnable("attention_bias",
                              std::string("a bias on the attention output projection"), c);
        if (c.mlp_bias)
            r.mark_unrunnable("mlp_bias", std::string("biases on the MLP projections"), c);
        return;
    case Variant::Gpt2:
        return;
    }
}

void read_llama(const Reader& r, TransformerConfig& c) {
    c.n_layer = r.positive("num_hidden_layers");
    c.hidden = r.positive("hidden_size");
    c.n_head = r.positive("num_attention_heads");
    // transformers' defaults per model type for the fields a config may leave out.
    const bool mistral = c.variant == Variant::Mistral, qwen2 = c.variant == Variant::Qwen2;
    c.n_kv_head = r.positive_or("num_key_value_heads", mistral ? 8 : qwen2 ? 32 : c.n_head);
    c.intermediate = r.positive("intermediate_size");
    c.vocab = r.positive("vocab_size");
    c.max_positions = r.positive_or("max_position_embeddings", mistral ? 131072
                                                               : qwen2 ? 32768
                                                                       : 2048);
    c.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
    c.norm_eps = r.positive_real_or("rms_norm_eps", 1e-6); // the transformers defaults
    c.rope_theta = r.positive_real_or("rope_theta", 10000.0);
    read_variant_fields(r, c);
    r.mark_unrunnable("hidden_act",
                      r.unsupported("hidden_act", "silu", {"silu", "swish"}, "activation"), c);
    read_rope_scaling(r, c);
}

// A head_dim beside hidden_size / num_attention_heads (newer configs write both) must agree:
// q, k and v are heads * (hidden / heads) wide here.
void check_head_dim(const Reader& r, const TransformerConfig& c) {
    if (c.family != TransformerConfig::Family::Llama || !r.has("head_dim")) return;
    const uint64_t head_dim = r.positive("head_dim");
    if (head_dim != c.hidden / c.n_head)
        r.bad("head_dim", fmt::format("heads of {} values are not supported: hidden size {} over "
                                      "{} heads gives {}",
                                      head_dim, c.hidden, c.n_head, c.hidden / c.n_head));
}

void check_heads(const Reader& r, const TransformerConfig& c) {
    bool gpt2 = c.family == TransformerConfig::Family::Gpt2;
    if (c.hidden % c.n_head != 0)
        r.bad(gpt2 ? "n_head" : "num_attention_heads", "hidden size " + std::to_string(c.hidden) +
                                                           " is not divisible by " +
                                                           std::to_string(c.n_head) + " heads");
    if (c.n_head % c.n_kv_head != 0)
        r.bad("num_key_value_heads", std::to_string(c.n_head) +
                                         " attention heads are not divisible by " +
                                         std::to_string(c.n_kv_head) + " key/value heads");
}

} // namespace

std::string_view variant_name(TransformerConfig::Variant v) {
    switch (v) {
    case Variant::Gpt2:
        return "gpt2";
    case Variant::Llama:
        return "llama";
    case Variant::Mistral:
        return "mistral";
    case Variant::Qwen2:
        return "qwen2";
    }
    return "gpt2";
}

std::string_view family_name(TransformerConfig::Family f) {
    return f == TransformerConfig::Family::Gpt2 ? "gpt2" : "llama";
}

TransformerConfig parse_transformer_config(std::string_view json_text, std::string_view origin) {
    json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded())
        fail(FailureCode::InvalidIrShapes, std::string(origin), "not valid JSON");
    if (!doc.is_object())
        fail(FailureCode::InvalidIrShapes, std::string(origin), "expected a JSON object");
    Reader r{doc, origin};
    const std::optional<Variant> variant = detect_variant(r);
    if (!variant) {
        if (r.has("model_type"))
            r.refuse("model_type",
                     r.unsupported("model_type", "", {"gpt2", "llama", "mistral", "qwen2"},
                                   "model type"));
        r.bad("model_type", "expected model_type \"gpt2\", \"llama\", \"mistral\" or "
                            "\"qwen2\", or GPT-2 (n_embd) or Llama (hidden_size) fields");
    }
    TransformerConfig c;
    c.variant = *variant;
    c.family = c.variant == Variant::Gpt2 ? TransformerConfig::Family::Gpt2
                                          : TransformerConfig::Family::Llama;
    if (c.family == TransformerConfig::Family::Gpt2)
        read_gpt2(r, c);
    else
        read_llama(r, c);
    check_heads(r, c);
    check_head_dim(r, c);
    c.name = r.string_or("_name_or_path", "");
    if (c.name.empty()) c.name = stem_of(origin);
    return c;
}

TransformerConfig load_transformer_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, "cannot open transformer config for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read error");
    return parse_transformer_config(text.str(), path);
}

bool looks_like_transformer_config(std::string_view text) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return false;
    if (doc.contains("tensors") || doc.contains("nodes")) return false;
    auto type = doc.find("model_type");
    if (type != doc.end() && type->is_string() &&
        (*type == "gpt2" || *type == "llama" || *type == "mistral" || *type == "qwen2"))
        return true;
    bool gpt2 = doc.contains("n_embd") && doc.contains("n_layer") && doc.contains("n_head");
    bool llama = doc.contains("hidden_size") && doc.contains("num_hidden_layers") &&
                 doc.contains("num_attention_heads");
    return gpt2 || llama;
}

} // namespace tmmu
