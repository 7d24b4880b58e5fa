#include "encoding/sha256.h"

#include "core/failure.h"

#include <openssl/evp.h>

namespace tmmu {

Digest sha256(const uint8_t* data, size_t size) {
    static const uint8_t kEmpty = 0; // EVP_Digest wants a valid pointer even for no bytes
    Digest out{};
    unsigned int len = 0;
    if (EVP_Digest(size == 0 ? &kEmpty : data, size, out.data(), &len, EVP_sha256(), nullptr) !=
            1 ||
        len != out.size())
        fail(FailureCode::IoError, "sha256", "OpenSSL EVP_Digest(SHA-256) failed");
    return out;
}

Digest sha256(const std::vector<uint8_t>& data) {
    return sha256(data.data(), data.size());
}

Digest sha256(std::string_view text) {
    return sha256(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
        fail(FailureCode::IoError, "sha256", "OpenSSL EVP_DigestInit(SHA-256) failed");
    }
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::update(const uint8_t* data, size_t size) {
    if (size != 0 && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, size) != 1)
        fail(FailureCode::IoError, "sha256", "OpenSSL EVP_DigestUpdate failed");
}

Digest Sha256::finish() {
    Digest out{};
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len) != 1 ||
        len != out.size())
        fail(FailureCode::IoError, "sha256", "OpenSSL EVP_DigestFinal failed");
    return out;
}

} // namespace tmmu
