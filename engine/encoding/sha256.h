#pragma once
// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface; OpenSSL stays out of the headers.
#include "core/digest.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

Digest sha256(const uint8_t* data, size_t size);
Digest sha256(const std::vector<uint8_t>& data);
Digest sha256(std::string_view text);

// Incremental SHA-256 for data that arrives in pieces (a file minus one field, say).
class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const uint8_t* data, size_t size);
    Digest finish(); // once

  private:
    void* ctx_; // EVP_MD_CTX
};

} // namespace tmmu
