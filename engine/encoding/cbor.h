#pragma once
// A small CBOR (RFC 8949) value type with the core deterministic encoding of section 4.2.1:
// shortest integer and length heads, definite lengths only, map entries sorted by the bytewise
// order of their encoded keys, no duplicate keys. The decoder accepts exactly that encoding and
// nothing else, so a decoded value re-encodes to the same bytes. No floats, tags or undefined:
// the formats built on this (plan hash, checkpoint) encode ratios as integers or omit them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tmmu::cbor {

enum class Type : uint8_t { Unsigned, Negative, Bytes, Text, Array, Map, Bool, Null };
std::string_view type_name(Type t); // "an unsigned integer", "a map", ... for messages

// Major types of RFC 8949 section 3.1 and the simple values this format allows.
inline constexpr uint8_t kMajorUnsigned = 0;
inline constexpr uint8_t kMajorNegative = 1;
inline constexpr uint8_t kMajorBytes = 2;
inline constexpr uint8_t kMajorText = 3;
inline constexpr uint8_t kMajorArray = 4;
inline constexpr uint8_t kMajorMap = 5;
inline constexpr uint8_t kMajorTag = 6;
inline constexpr uint8_t kMajorSimple = 7;
inline constexpr uint8_t kFalse = 0xf4;
inline constexpr uint8_t kTrue = 0xf5;
inline constexpr uint8_t kNull = 0xf6;

// Nesting deeper than this (arrays and maps inside each other) is refused by both directions.
constexpr int kMaxDepth = 64;

struct Value {
    Type type = Type::Null;
    // Unsigned: the value. Negative: n where the value is -1 - n (so -2^64 is representable).
    uint64_t number = 0;
    bool flag = false;                            // Bool
    std::string text;                             // Text (UTF-8)
    std::vector<uint8_t> bytes;                   // Bytes
    std::vector<Value> items;                     // Array
    std::vector<std::pair<Value, Value>> entries; // Map, in insertion order until encoded

    static Value null() { return Value{}; }
    static Value boolean(bool b);
    static Value uint64(uint64_t v);
    static Value integer(int64_t v);
    static Value str(std::string_view s);
    static Value byte_string(const uint8_t* data, size_t size);
    static Value byte_string(std::vector<uint8_t> data);
    static Value array(std::vector<Value> items = {});
    static Value map(std::vector<std::pair<Value, Value>> entries = {});

    // Map helpers: append a text-keyed entry; find the value of a text key (nullptr if absent).
    Value& set(std::string_view key, Value v);
    const Value* find(std::string_view key) const;

    bool is(Type t) const { return type == t; }
    bool operator==(const Value& o) const;
};

// Encodes v deterministically. Throws Failure(InvalidArgument) for a map with two equal keys,
// a text string that is not UTF-8, or nesting deeper than kMaxDepth.
std::vector<uint8_t> encode_canonical(const Value& v);

// Streams deterministic CBOR without building a Value tree, for large tables of arrays,
// integers and strings (plan and problem hashes). The bytes equal encode_canonical() of the
// equivalent Value; the caller writes each array's item count before its items.
class Writer {
  public:
    void array(size_t count);
    void map(size_t count); // then count key/value pairs, keys in deterministic order
    void uint64(uint64_t n);
    void text(std::string_view s); // throws Failure(InvalidArgument) when not UTF-8
    void bytes(const uint8_t* data, size_t size);
    void null();
    void value(const Value& v); // any Value, maps included, encoded canonically
    const std::vector<uint8_t>& data() const { return out_; }
    std::vector<uint8_t> take() { return std::move(out_); }

  private:
    std::vector<uint8_t> out_;
};

// Decodes exactly one deterministically encoded item spanning all `size` bytes. Throws
// Failure(CorruptCheckpoint) whose "where" is "cbor byte N" for truncation, indefinite
// lengths, non-shortest heads, unsorted or duplicate map keys, trailing bytes, floats, tags,
// simple values other than false/true/null, invalid UTF-8, nesting deeper than kMaxDepth and
// lengths beyond the input. Never reads outside [data, data + size).
Value decode(const uint8_t* data, size_t size);

// A pull parser over one item in the same strict encoding, for documents too large for a Value
// tree (checkpoints of 100k tensors): the caller reads straight into its own structures and
// checks each type with peek() so that it can name its own field in a mismatch. Malformed input
// fails exactly as decode() does ("cbor byte N"). Key order inside maps the caller walks is the
// caller's to check (check_key_order); skip() checks everything it passes over.
class Reader {
  public:
    Reader(const uint8_t* data, size_t size);

    Type peek();           // the next item's type; throws at the end or for bad input
    size_t offset() const; // where the next item starts
    const uint8_t* data() const { return d_; }
    uint64_t uint64();   // each typed read fails unless peek() is that type
    uint64_t negative(); // n, where the value is -1 - n
    bool boolean();
    void null();
    std::string_view text(); // checked UTF-8
    std::pair<const uint8_t*, size_t> bytes();
    size_t array(int depth); // the item count; depth is the new array's nesting level
    size_t map(int depth);   // the entry count; keys and values follow, alternating
    void skip(int depth);    // one whole item inside `depth` levels, fully checked
    void finish() const;     // fails unless the input ended exactly here
    // Keys must be strictly ascending in the bytewise order of their encodings.
    void check_key_order(size_t prev_begin, size_t prev_end, size_t begin, size_t end) const;
    [[noreturn]] void bad(size_t at, const std::string& message) const;

  private:
    struct Head {
        Type type;
        uint64_t arg; // value, length or count
        size_t start; // the initial byte
        size_t end;   // first byte after the head
    };
    Head read_head() const;
    uint64_t argument(size_t start, uint8_t initial, size_t& pos) const;
    Head take(Type t);
    const uint8_t* span(const Head& h);

    const uint8_t* d_;
    size_t n_;
    size_t pos_ = 0;
    bool peeked_ = false;
    Head head_{};
};

} // namespace tmmu::cbor
