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
    void uint64(uint64_t n);
    void text(std::string_view s); // throws Failure(InvalidArgument) when not UTF-8
    void bytes(const uint8_t* data, size_t size);
    void null();
    void value(const Value& v); // any Value, maps included, encoded canonically
    const std::vector<uint8_t>& data() const { return out_; }

  private:
    std::vector<uint8_t> out_;
};

// Decodes exactly one deterministically encoded item spanning all `size` bytes. Throws
// Failure(CorruptCheckpoint) whose "where" is "cbor byte N" for truncation, indefinite
// lengths, non-shortest heads, unsorted or duplicate map keys, trailing bytes, floats, tags,
// simple values other than false/true/null, invalid UTF-8, nesting deeper than kMaxDepth and
// lengths beyond the input. Never reads outside [data, data + size).
Value decode(const uint8_t* data, size_t size);

} // namespace tmmu::cbor
