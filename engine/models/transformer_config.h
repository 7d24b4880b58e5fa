#pragma once
// Transformer hyperparameters read from a Hugging Face style config.json (GPT-2 or Llama
// field names). The fields that fix tensor shapes are kept; those that change what the model
// computes are checked against what the runtime implements (Unrunnable); the rest (dropout,
// token ids, generation settings) do not matter here and are ignored.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tmmu {

// A Llama config's rope_scaling: how the rotation frequencies theta^(-2i/d) are rescaled for
// contexts past the one the model was trained on (Hugging Face's rope_type "linear" and
// "llama3"; others are not computed, and marked Unrunnable).
struct RopeScaling {
    enum class Kind : uint32_t { None = 0, Linear = 1, Llama3 = 2 };
    Kind kind = Kind::None;
    double factor = 1;                   // every frequency (linear), the low ones (llama3), / this
    double low_freq_factor = 1;          // llama3: wavelengths above original / this are scaled
    double high_freq_factor = 4;         // llama3: those below original / this are kept
    uint64_t original_max_positions = 0; // llama3: the context the model was trained on
};

struct TransformerConfig {
    enum class Family { Gpt2, Llama };
    Family family = Family::Gpt2;
    // The Llama family's model types: Llama, Mistral (Llama's tensors, and a sliding window)
    // and Qwen2 (Llama's, with q/k/v biases). GPT-2 configs are Gpt2.
    enum class Variant { Gpt2, Llama, Mistral, Qwen2 };
    Variant variant = Variant::Gpt2;
    // Biases on the Llama family's projections: q, k and v (Qwen2; Llama's attention_bias), the
    // attention output (Llama's attention_bias), and the MLP's three (Llama's mlp_bias). The
    // graph has them all; the runtime's Llama blocks add q, k and v's (the others: unrunnable).
    bool qkv_bias = false, o_bias = false, mlp_bias = false;
    // Sliding-window attention (Mistral; Qwen2's upper layers): a token attends to the last
    // this many positions. A run whose context is no longer attends as full attention does,
    // which is all the runtime computes: compile_transformer refuses a longer context. 0: none
    // (also a window no shorter than max_positions).
    uint64_t sliding_window = 0;
    std::string sliding_window_where; // the file and field, as a failure's where()
    uint64_t n_layer = 0;
    uint64_t hidden = 0;       // embedding width (GPT-2 n_embd, Llama hidden_size)
    uint64_t n_head = 0;       // query heads
    uint64_t n_kv_head = 0;    // key/value heads; == n_head unless grouped-query attention
    uint64_t intermediate = 0; // MLP width (GPT-2 n_inner or 4*n_embd)
    uint64_t vocab = 0;
    uint64_t max_positions = 0;   // longest sequence the model accepts
    std::string name;             // config "_name_or_path", else the file stem of origin
    bool tied_embeddings = false; // lm head shares the token embedding matrix
    double norm_eps = 1e-5;       // GPT-2 layer_norm_epsilon, Llama rms_norm_eps
    double rope_theta = 0;        // Llama rope_theta (default 10000); 0 for GPT-2 (no RoPE)
    RopeScaling rope_scaling;     // Llama rope_scaling; None without one or for "default"
    // Set where the config asks for a computation the runtime's kernels do not do (RoPE
    // scaling other than linear or llama3, another activation): its graph and memory are the
    // model's, but compile_transformer refuses it, naming this field, rather than run it as the
    // default.
    struct Unrunnable {
        std::string where; // the file and field, as a failure's where()
        std::string message;
    };
    std::optional<Unrunnable> unrunnable;

    uint64_t head_dim() const { return hidden / n_head; }
};

std::string_view family_name(TransformerConfig::Family f); // "gpt2", "llama"
// "gpt2", "llama", "mistral", "qwen2": the model_type a config of this variant has.
std::string_view variant_name(TransformerConfig::Variant v);

// Parses config.json text. origin names the source (a path) in failures and in the default
// name. Throws INVALID_IR_SHAPES naming origin and the field: malformed JSON, missing field,
// non-integer or non-positive value, hidden not divisible by heads, heads not divisible by kv
// heads, a head_dim that disagrees with them, cross-attention the graph does not have, unknown
// family. Family: model_type "gpt2", or "llama"/"mistral"/"qwen2" (any other model_type is
// refused), else by which fields exist.
TransformerConfig parse_transformer_config(std::string_view json_text, std::string_view origin);

// Reads and parses a file; IO_ERROR when it cannot be read.
TransformerConfig load_transformer_config(const std::string& path);

// Cheap sniff for loaders choosing a format: a JSON object with GPT-2 or Llama config fields
// (and no native-IR "tensors"/"nodes" arrays). Never throws.
bool looks_like_transformer_config(std::string_view text);

} // namespace tmmu
