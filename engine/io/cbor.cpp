#include "io/cbor.h"

#include "core/failure.h"

#include <algorithm>
#include <numeric>

namespace tmmu::cbor {

namespace {

// Major types of RFC 8949 section 3.1.
constexpr uint8_t kMajorUnsigned = 0;
constexpr uint8_t kMajorNegative = 1;
constexpr uint8_t kMajorBytes = 2;
constexpr uint8_t kMajorText = 3;
constexpr uint8_t kMajorArray = 4;
constexpr uint8_t kMajorMap = 5;
constexpr uint8_t kMajorSimple = 7;
constexpr uint8_t kFalse = 0xf4;
constexpr uint8_t kTrue = 0xf5;
constexpr uint8_t kNull = 0xf6;

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(const uint8_t* s, size_t n) {
    size_t i = 0;
    while (i < n) {
        const uint8_t c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint32_t cp = 0;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < len) return false;
        for (size_t k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
        if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

bool valid_utf8(std::string_view s) {
    return valid_utf8(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// Shortest head for (major, argument): section 4.2.1's preferred serialization.
void put_head(std::vector<uint8_t>& out, uint8_t major, uint64_t arg) {
    const auto m = static_cast<uint8_t>(major << 5);
    int extra = 0;
    if (arg < 24) {
        out.push_back(static_cast<uint8_t>(m | arg));
        return;
    }
    if (arg <= 0xFF) {
        out.push_back(m | 24);
        extra = 1;
    } else if (arg <= 0xFFFF) {
        out.push_back(m | 25);
        extra = 2;
    } else if (arg <= 0xFFFFFFFFull) {
        out.push_back(m | 26);
        extra = 4;
    } else {
        out.push_back(m | 27);
        extra = 8;
    }
    for (int i = extra - 1; i >= 0; --i)
        out.push_back(static_cast<uint8_t>(arg >> (8 * i)));
}

void encode_into(std::vector<uint8_t>& out, const Value& v, int depth);

void encode_map(std::vector<uint8_t>& out, const Value& v, int depth) {
    // Keys are encoded first because the deterministic order is that of the encoded bytes.
    std::vector<std::vector<uint8_t>> keys;
    keys.reserve(v.entries.size());
    for (const auto& [key, value] : v.entries) {
        keys.emplace_back();
        encode_into(keys.back(), key, depth + 1);
    }
    std::vector<size_t> order(keys.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    for (size_t i = 1; i < order.size(); ++i) {
        if (keys[order[i - 1]] == keys[order[i]])
            fail(FailureCode::InvalidArgument, "cbor map entry " + std::to_string(order[i]),
                 "map keys must be unique; this key repeats entry " + std::to_string(order[i - 1]));
    }
    put_head(out, kMajorMap, v.entries.size());
    for (size_t i : order) {
        out.insert(out.end(), keys[i].begin(), keys[i].end());
        encode_into(out, v.entries[i].second, depth + 1);
    }
}

void encode_into(std::vector<uint8_t>& out, const Value& v, int depth) {
    if ((v.type == Type::Array || v.type == Type::Map) && depth + 1 > kMaxDepth)
        fail(FailureCode::InvalidArgument, "cbor value",
             "nesting deeper than " + std::to_string(kMaxDepth) + " arrays/maps");
    switch (v.type) {
    case Type::Unsigned:
        put_head(out, kMajorUnsigned, v.number);
        break;
    case Type::Negative:
        put_head(out, kMajorNegative, v.number);
        break;
    case Type::Bytes:
        put_head(out, kMajorBytes, v.bytes.size());
        out.insert(out.end(), v.bytes.begin(), v.bytes.end());
        break;
    case Type::Text:
        if (!valid_utf8(v.text))
            fail(FailureCode::InvalidArgument, "cbor text string", "text is not valid UTF-8");
        put_head(out, kMajorText, v.text.size());
        out.insert(out.end(), v.text.begin(), v.text.end());
        break;
    case Type::Array:
        put_head(out, kMajorArray, v.items.size());
        for (const Value& item : v.items)
            encode_into(out, item, depth + 1);
        break;
    case Type::Map:
        encode_map(out, v, depth);
        break;
    case Type::Bool:
        out.push_back(v.flag ? kTrue : kFalse);
        break;
    case Type::Null:
        out.push_back(kNull);
        break;
    }
}

// Recursive-descent decoder over [data, data + size). Every read is bounds-checked first.
class Decoder {
  public:
    Decoder(const uint8_t* data, size_t size) : d_(data), n_(size) {}

    Value top() {
        Value v = item(0);
        if (pos_ != n_)
            bad(pos_, std::to_string(n_ - pos_) + " trailing bytes after the top-level item");
        return v;
    }

  private:
    [[noreturn]] void bad(size_t at, const std::string& message) const {
        fail(FailureCode::CorruptCheckpoint, "cbor byte " + std::to_string(at), message);
    }

    size_t remaining() const { return n_ - pos_; }

    // Reads a head; returns its argument and rejects indefinite and non-shortest forms.
    uint64_t head(size_t start, uint8_t initial) {
        const uint8_t ai = initial & 0x1F;
        if (ai < 24) return ai;
        if (ai == 31) bad(start, "indefinite length is not allowed in deterministic CBOR");
        if (ai > 27) bad(start, "reserved additional information " + std::to_string(ai));
        const size_t len = size_t{1} << (ai - 24);
        if (remaining() < len)
            bad(start, "truncated: head needs " + std::to_string(len) + " more bytes, " +
                           std::to_string(remaining()) + " left");
        uint64_t arg = 0;
        for (size_t i = 0; i < len; ++i)
            arg = (arg << 8) | d_[pos_++];
        static constexpr uint64_t kMin[] = {24, 0x100, 0x10000, 0x100000000ull};
        if (arg < kMin[ai - 24])
            bad(start, "non-shortest head: " + std::to_string(arg) + " encoded in " +
                           std::to_string(len + 1) + " bytes");
        return arg;
    }

    Value item(int depth) {
        const size_t start = pos_;
        if (pos_ >= n_) bad(start, "truncated: expected a data item, the input ended");
        const uint8_t initial = d_[pos_++];
        const uint8_t major = initial >> 5;
        if (major == kMajorSimple) return simple(start, initial);
        if (major == 6) bad(start, "tags are not used by this format");
        const uint64_t arg = head(start, initial);
        switch (major) {
        case kMajorUnsigned:
            return Value::uint64(arg);
        case kMajorNegative: {
            Value v;
            v.type = Type::Negative;
            v.number = arg;
            return v;
        }
        case kMajorBytes: {
            const uint8_t* p = span(start, arg);
            return Value::byte_string(p, static_cast<size_t>(arg));
        }
        case kMajorText: {
            const uint8_t* p = span(start, arg);
            if (!valid_utf8(p, static_cast<size_t>(arg)))
                bad(start, "text string is not valid UTF-8");
            return Value::str(std::string_view(reinterpret_cast<const char*>(p), arg));
        }
        case kMajorArray:
            return array(start, arg, depth);
        default:
            return map(start, arg, depth);
        }
    }

    Value simple(size_t start, uint8_t initial) {
        if (initial == kFalse) return Value::boolean(false);
        if (initial == kTrue) return Value::boolean(true);
        if (initial == kNull) return Value::null();
        bad(start, "only false, true and null are allowed among major type 7 (no floats, "
                   "undefined or break)");
    }

    const uint8_t* span(size_t start, uint64_t len) {
        if (len > remaining())
            bad(start, "string length " + std::to_string(len) + " exceeds the " +
                           std::to_string(remaining()) + " bytes left");
        const uint8_t* p = d_ + pos_;
        pos_ += static_cast<size_t>(len);
        return p;
    }

    void enter(size_t start, int depth) const {
        if (depth + 1 > kMaxDepth)
            bad(start, "nesting deeper than " + std::to_string(kMaxDepth) + " arrays/maps");
    }

    Value array(size_t start, uint64_t count, int depth) {
        enter(start, depth);
        if (count > remaining())
            bad(start, "array of " + std::to_string(count) + " items cannot fit in the " +
                           std::to_string(remaining()) + " bytes left");
        Value v = Value::array();
        v.items.reserve(std::min<uint64_t>(count, 4096));
        for (uint64_t i = 0; i < count; ++i)
            v.items.push_back(item(depth + 1));
        return v;
    }

    Value map(size_t start, uint64_t count, int depth) {
        enter(start, depth);
        if (count > remaining() / 2)
            bad(start, "map of " + std::to_string(count) + " entries cannot fit in the " +
                           std::to_string(remaining()) + " bytes left");
        Value v = Value::map();
        v.entries.reserve(std::min<uint64_t>(count, 4096));
        size_t prev_begin = 0, prev_end = 0;
        for (uint64_t i = 0; i < count; ++i) {
            const size_t key_begin = pos_;
            Value key = item(depth + 1);
            const size_t key_end = pos_;
            if (i > 0) check_key_order(prev_begin, prev_end, key_begin, key_end);
            prev_begin = key_begin;
            prev_end = key_end;
            Value value = item(depth + 1);
            v.entries.emplace_back(std::move(key), std::move(value));
        }
        return v;
    }

    // Keys must be strictly ascending in the bytewise order of their encodings.
    void check_key_order(size_t pb, size_t pe, size_t kb, size_t ke) const {
        const bool less = std::lexicographical_compare(d_ + pb, d_ + pe, d_ + kb, d_ + ke);
        if (less) return;
        if (std::equal(d_ + pb, d_ + pe, d_ + kb, d_ + ke)) bad(kb, "duplicate map key");
        bad(kb, "map keys are not in bytewise ascending order of their encodings");
    }

    const uint8_t* d_;
    size_t n_;
    size_t pos_ = 0;
};

} // namespace

Value Value::boolean(bool b) {
    Value v;
    v.type = Type::Bool;
    v.flag = b;
    return v;
}

Value Value::uint64(uint64_t n) {
    Value v;
    v.type = Type::Unsigned;
    v.number = n;
    return v;
}

Value Value::integer(int64_t n) {
    if (n >= 0) return uint64(static_cast<uint64_t>(n));
    Value v;
    v.type = Type::Negative;
    v.number = static_cast<uint64_t>(-(n + 1)); // -1 - n, without overflowing at INT64_MIN
    return v;
}

Value Value::str(std::string_view s) {
    Value v;
    v.type = Type::Text;
    v.text = std::string(s);
    return v;
}

Value Value::byte_string(const uint8_t* data, size_t size) {
    return byte_string(std::vector<uint8_t>(data, data + size));
}

Value Value::byte_string(std::vector<uint8_t> data) {
    Value v;
    v.type = Type::Bytes;
    v.bytes = std::move(data);
    return v;
}

Value Value::array(std::vector<Value> items) {
    Value v;
    v.type = Type::Array;
    v.items = std::move(items);
    return v;
}

Value Value::map(std::vector<std::pair<Value, Value>> entries) {
    Value v;
    v.type = Type::Map;
    v.entries = std::move(entries);
    return v;
}

Value& Value::set(std::string_view key, Value v) {
    entries.emplace_back(str(key), std::move(v));
    return entries.back().second;
}

const Value* Value::find(std::string_view key) const {
    for (const auto& [k, v] : entries)
        if (k.type == Type::Text && k.text == key) return &v;
    return nullptr;
}

bool Value::operator==(const Value& o) const {
    if (type != o.type) return false;
    switch (type) {
    case Type::Unsigned:
    case Type::Negative:
        return number == o.number;
    case Type::Bytes:
        return bytes == o.bytes;
    case Type::Text:
        return text == o.text;
    case Type::Array:
        return items == o.items;
    case Type::Map:
        return entries == o.entries;
    case Type::Bool:
        return flag == o.flag;
    case Type::Null:
        return true;
    }
    return false;
}

void Writer::array(size_t count) {
    put_head(out_, kMajorArray, count);
}
void Writer::uint64(uint64_t n) {
    put_head(out_, kMajorUnsigned, n);
}

void Writer::text(std::string_view s) {
    if (!valid_utf8(s))
        fail(FailureCode::InvalidArgument, "cbor text string", "text is not valid UTF-8");
    put_head(out_, kMajorText, s.size());
    out_.insert(out_.end(), s.begin(), s.end());
}

void Writer::bytes(const uint8_t* data, size_t size) {
    put_head(out_, kMajorBytes, size);
    out_.insert(out_.end(), data, data + size);
}

void Writer::null() {
    out_.push_back(kNull);
}
void Writer::value(const Value& v) {
    encode_into(out_, v, 0);
}

std::vector<uint8_t> encode_canonical(const Value& v) {
    std::vector<uint8_t> out;
    encode_into(out, v, 0);
    return out;
}

Value decode(const uint8_t* data, size_t size) {
    if (data == nullptr && size != 0)
        fail(FailureCode::InvalidArgument, "cbor::decode", "null data with a non-zero size");
    return Decoder(data, size).top();
}

} // namespace tmmu::cbor
