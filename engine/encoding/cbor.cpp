#include "encoding/cbor.h"

#include "core/failure.h"
#include "encoding/utf8.h"

#include <algorithm>
#include <numeric>

namespace tmmu::cbor {

namespace {

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
        if (!is_valid_utf8(v.text))
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
void Writer::map(size_t count) {
    put_head(out_, kMajorMap, count);
}
void Writer::uint64(uint64_t n) {
    put_head(out_, kMajorUnsigned, n);
}

void Writer::text(std::string_view s) {
    if (!is_valid_utf8(s))
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

std::string_view type_name(Type t) {
    switch (t) {
    case Type::Unsigned:
        return "an unsigned integer";
    case Type::Negative:
        return "a negative integer";
    case Type::Bytes:
        return "a byte string";
    case Type::Text:
        return "a text string";
    case Type::Array:
        return "an array";
    case Type::Map:
        return "a map";
    case Type::Bool:
        return "a boolean";
    case Type::Null:
        return "null";
    }
    return "?";
}

std::vector<uint8_t> encode_canonical(const Value& v) {
    std::vector<uint8_t> out;
    encode_into(out, v, 0);
    return out;
}

} // namespace tmmu::cbor
