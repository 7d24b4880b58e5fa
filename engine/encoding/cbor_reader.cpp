// Decoding: the pull parser (Reader) and the Value-tree decoder built on it.
#include "encoding/cbor.h"

#include "core/failure.h"
#include "encoding/utf8.h"

#include <algorithm>

namespace tmmu::cbor {

Reader::Reader(const uint8_t* data, size_t size) : d_(data), n_(size) {
    if (data == nullptr && size != 0)
        fail(FailureCode::InvalidArgument, "cbor::Reader", "null data with a non-zero size");
}

void Reader::bad(size_t at, const std::string& message) const {
    fail(FailureCode::CorruptCheckpoint, "cbor byte " + std::to_string(at), message);
}

size_t Reader::offset() const {
    return peeked_ ? head_.start : pos_;
}

// Reads a head's argument after the initial byte; rejects indefinite and non-shortest forms.
uint64_t Reader::argument(size_t start, uint8_t initial, size_t& pos) const {
    const uint8_t ai = initial & 0x1F;
    if (ai < 24) return ai;
    if (ai == 31) bad(start, "indefinite length is not allowed in deterministic CBOR");
    if (ai > 27) bad(start, "reserved additional information " + std::to_string(ai));
    const size_t len = size_t{1} << (ai - 24);
    if (n_ - pos < len)
        bad(start, "truncated: head needs " + std::to_string(len) + " more bytes, " +
                       std::to_string(n_ - pos) + " left");
    uint64_t arg = 0;
    for (size_t i = 0; i < len; ++i)
        arg = (arg << 8) | d_[pos++];
    static constexpr uint64_t kMin[] = {24, 0x100, 0x10000, 0x100000000ull};
    if (arg < kMin[ai - 24])
        bad(start, "non-shortest head: " + std::to_string(arg) + " encoded in " +
                       std::to_string(len + 1) + " bytes");
    return arg;
}

Reader::Head Reader::read_head() const {
    size_t pos = pos_;
    const size_t start = pos;
    if (pos >= n_) bad(start, "truncated: expected a data item, the input ended");
    const uint8_t initial = d_[pos++];
    const uint8_t major = initial >> 5;
    if (major == kMajorSimple) {
        if (initial == kFalse || initial == kTrue)
            return {Type::Bool, uint64_t(initial == kTrue), start, pos};
        if (initial == kNull) return {Type::Null, 0, start, pos};
        bad(start, "only false, true and null are allowed among major type 7 (no floats, "
                   "undefined or break)");
    }
    if (major == kMajorTag) bad(start, "tags are not used by this format");
    const uint64_t arg = argument(start, initial, pos);
    const size_t left = n_ - pos;
    static constexpr Type kTypes[] = {Type::Unsigned, Type::Negative, Type::Bytes,
                                      Type::Text,     Type::Array,    Type::Map};
    const Type type = kTypes[major];
    if ((type == Type::Bytes || type == Type::Text) && arg > left)
        bad(start, "string length " + std::to_string(arg) + " exceeds the " + std::to_string(left) +
                       " bytes left");
    // Every item takes at least one byte, every entry two: counts beyond that are lies that
    // must not drive a reservation.
    if (type == Type::Array && arg > left)
        bad(start, "array of " + std::to_string(arg) + " items cannot fit in the " +
                       std::to_string(left) + " bytes left");
    if (type == Type::Map && arg > left / 2)
        bad(start, "map of " + std::to_string(arg) + " entries cannot fit in the " +
                       std::to_string(left) + " bytes left");
    return {type, arg, start, pos};
}

Type Reader::peek() {
    if (!peeked_) {
        head_ = read_head();
        peeked_ = true;
    }
    return head_.type;
}

Reader::Head Reader::take(Type t) {
    if (peek() != t)
        bad(head_.start, "expected " + std::string(type_name(t)) + ", found " +
                             std::string(type_name(head_.type)));
    peeked_ = false;
    pos_ = head_.end;
    return head_;
}

const uint8_t* Reader::span(const Head& h) {
    const uint8_t* p = d_ + pos_;
    pos_ += static_cast<size_t>(h.arg);
    return p;
}

uint64_t Reader::uint64() {
    return take(Type::Unsigned).arg;
}

uint64_t Reader::negative() {
    return take(Type::Negative).arg;
}

bool Reader::boolean() {
    return take(Type::Bool).arg != 0;
}

void Reader::null() {
    take(Type::Null);
}

std::string_view Reader::text() {
    const Head h = take(Type::Text);
    const uint8_t* p = span(h);
    if (!is_valid_utf8(p, static_cast<size_t>(h.arg)))
        bad(h.start, "text string is not valid UTF-8");
    return {reinterpret_cast<const char*>(p), static_cast<size_t>(h.arg)};
}

std::pair<const uint8_t*, size_t> Reader::bytes() {
    const Head h = take(Type::Bytes);
    return {span(h), static_cast<size_t>(h.arg)};
}

size_t Reader::array(int depth) {
    const Head h = take(Type::Array);
    if (depth > kMaxDepth)
        bad(h.start, "nesting deeper than " + std::to_string(kMaxDepth) + " arrays/maps");
    return static_cast<size_t>(h.arg);
}

size_t Reader::map(int depth) {
    const Head h = take(Type::Map);
    if (depth > kMaxDepth)
        bad(h.start, "nesting deeper than " + std::to_string(kMaxDepth) + " arrays/maps");
    return static_cast<size_t>(h.arg);
}

void Reader::check_key_order(size_t pb, size_t pe, size_t kb, size_t ke) const {
    if (std::lexicographical_compare(d_ + pb, d_ + pe, d_ + kb, d_ + ke)) return;
    if (std::equal(d_ + pb, d_ + pe, d_ + kb, d_ + ke)) bad(kb, "duplicate map key");
    bad(kb, "map keys are not in bytewise ascending order of their encodings");
}

void Reader::skip(int depth) {
    switch (peek()) {
    case Type::Unsigned:
    case Type::Negative:
    case Type::Bool:
    case Type::Null:
        take(head_.type);
        return;
    case Type::Bytes:
        bytes();
        return;
    case Type::Text:
        text();
        return;
    case Type::Array:
        for (size_t i = 0, n = array(depth + 1); i < n; ++i)
            skip(depth + 1);
        return;
    case Type::Map: {
        size_t prev_begin = 0, prev_end = 0;
        for (size_t i = 0, n = map(depth + 1); i < n; ++i) {
            const size_t key_begin = offset();
            skip(depth + 1);
            if (i > 0) check_key_order(prev_begin, prev_end, key_begin, pos_);
            prev_begin = key_begin;
            prev_end = pos_;
            skip(depth + 1);
        }
        return;
    }
    }
}

void Reader::finish() const {
    const size_t at = offset();
    if (at != n_) bad(at, std::to_string(n_ - at) + " trailing bytes after the top-level item");
}

namespace {

Value item(Reader& r, int depth) {
    switch (r.peek()) {
    case Type::Unsigned:
        return Value::uint64(r.uint64());
    case Type::Negative: {
        Value v;
        v.type = Type::Negative;
        v.number = r.negative();
        return v;
    }
    case Type::Bytes: {
        const auto [p, n] = r.bytes();
        return Value::byte_string(p, n);
    }
    case Type::Text:
        return Value::str(r.text());
    case Type::Bool:
        return Value::boolean(r.boolean());
    case Type::Null:
        r.null();
        return Value::null();
    case Type::Array: {
        const size_t n = r.array(depth + 1);
        Value v = Value::array();
        v.items.reserve(std::min<size_t>(n, 4096));
        for (size_t i = 0; i < n; ++i)
            v.items.push_back(item(r, depth + 1));
        return v;
    }
    case Type::Map:
        break;
    }
    const size_t n = r.map(depth + 1);
    Value v = Value::map();
    v.entries.reserve(std::min<size_t>(n, 4096));
    size_t prev_begin = 0, prev_end = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t key_begin = r.offset();
        Value key = item(r, depth + 1);
        const size_t key_end = r.offset();
        if (i > 0) r.check_key_order(prev_begin, prev_end, key_begin, key_end);
        prev_begin = key_begin;
        prev_end = key_end;
        Value value = item(r, depth + 1);
        v.entries.emplace_back(std::move(key), std::move(value));
    }
    return v;
}

} // namespace

Value decode(const uint8_t* data, size_t size) {
    if (data == nullptr && size != 0)
        fail(FailureCode::InvalidArgument, "cbor::decode", "null data with a non-zero size");
    Reader r(data, size);
    Value v = item(r, 0);
    r.finish();
    return v;
}

} // namespace tmmu::cbor
