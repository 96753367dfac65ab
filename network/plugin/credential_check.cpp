// The PEM checks of a deployment's credentials (runtime/deployment_credentials.hpp), with OpenSSL:
// part of the network plugin so that only runs with a deployment load OpenSSL.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/status_macros.hpp"
#include "network/plugin/network_impl.hpp"

namespace troupe::network_impl {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
using File = std::unique_ptr<FILE, FileCloser>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

// A key under a passphrase would make OpenSSL prompt on the terminal: refuse instead.
int NoPassphrase(char*, int, int, void*) { return -1; }

std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  const char* reason = code == 0 ? nullptr : ERR_reason_error_string(code);
  return reason ? reason : "not PEM";
}

// Opens a regular, readable file; the error names it.
Status OpenFile(const std::string& path, const std::string& where, File* out) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return Status::InvalidInput(where + ": " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidInput(where + ": " + path + ": not a regular file");
  }
  out->reset(std::fopen(path.c_str(), "r"));
  if (!*out) return Status::InvalidInput(where + ": " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

Status ReadCertificate(const std::string& path, const std::string& where, Cert* out) {
  File file;
  RETURN_IF_ERROR(OpenFile(path, where, &file));
  out->reset(PEM_read_X509(file.get(), nullptr, NoPassphrase, nullptr));
  if (!*out) {
    return Status::InvalidInput(where + ": " + path + ": not a PEM certificate (" +
                                OpenSslReason() + ")");
  }
  return Status::Ok();
}

Status ReadKey(const std::string& path, const std::string& where, Key* out) {
  File file;
  RETURN_IF_ERROR(OpenFile(path, where, &file));
  out->reset(PEM_read_PrivateKey(file.get(), nullptr, NoPassphrase, nullptr));
  if (!*out) {
    return Status::InvalidInput(where + ": " + path +
                                ": not a PEM private key without passphrase (" + OpenSslReason() +
                                ")");
  }
  return Status::Ok();
}

// The certificate must chain to a CA in ca.pem (and be valid today), as a peer will check.
Status CheckSignedBy(const std::string& ca_file, const std::string& certificate_file,
                     X509* certificate, const std::string& where) {
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  if (!store || X509_STORE_load_file(store.get(), ca_file.c_str()) != 1) {
    return Status::InvalidInput(where + ": " + ca_file + ": cannot load as CA certificates (" +
                                OpenSslReason() + ")");
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> context(X509_STORE_CTX_new());
  if (!context || X509_STORE_CTX_init(context.get(), store.get(), certificate, nullptr) != 1) {
    return Status::Internal(where + ": cannot check " + certificate_file);
  }
  if (X509_verify_cert(context.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(context.get());
    ERR_clear_error();
    return Status::InvalidInput(where + ": " + certificate_file + ": not accepted by " + ca_file +
                                " (" + X509_verify_cert_error_string(error) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status CheckCredentialFiles(const std::string& ca_file, const std::string& certificate_file,
                            const std::string& key_file, const std::string& where) {
  Cert ca;
  Cert certificate;
  Key key;
  RETURN_IF_ERROR(ReadCertificate(ca_file, where, &ca));
  RETURN_IF_ERROR(ReadCertificate(certificate_file, where, &certificate));
  RETURN_IF_ERROR(ReadKey(key_file, where, &key));
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidInput(where + ": " + key_file + ": not the key of " + certificate_file);
  }
  return CheckSignedBy(ca_file, certificate_file, certificate.get(), where);
}

}  // namespace troupe::network_impl
