#include "paramserver/ssd_manifest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "paramserver/ssd_file.hpp"

namespace troupe::paramserver::ssd {
namespace {

constexpr uint64_t kManifestMagic = 0x314D445353505254ULL;  // "TRPSSDM1"
constexpr uint32_t kManifestVersion = 3;
constexpr size_t kFixedBytes = 56;  // magic, version, floats, next_seq, tag, run, shard, files
constexpr size_t kEntryBytes = 24;

void Append(std::vector<unsigned char>* out, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  out->insert(out->end(), b, b + n);
}

std::vector<unsigned char> Encode(const Manifest& m) {
  std::vector<unsigned char> out;
  out.reserve(kFixedBytes + m.files.size() * kEntryBytes + 4);
  const uint32_t floats = static_cast<uint32_t>(m.floats);
  const uint64_t files = m.files.size();
  Append(&out, &kManifestMagic, 8);
  Append(&out, &kManifestVersion, 4);
  Append(&out, &floats, 4);
  Append(&out, &m.next_seq, 8);
  Append(&out, &m.tag, 8);
  Append(&out, &m.identity.run, 8);
  Append(&out, &m.identity.shard, 8);
  Append(&out, &files, 8);
  for (const ManifestFile& f : m.files) {
    Append(&out, &f.seq, 8);
    Append(&out, &f.count, 8);
    Append(&out, &f.bytes, 8);
  }
  const uint32_t crc = Crc32c(out.data(), out.size());
  Append(&out, &crc, 4);
  return out;
}

Status Decode(const std::vector<unsigned char>& in, const std::string& path, Manifest* m) {
  if (in.size() < kFixedBytes + 4) return Status::Corrupt(path + ": truncated manifest");
  const size_t body = in.size() - 4;
  if (LoadBytes<uint32_t>(in.data() + body) != Crc32c(in.data(), body)) {
    return Status::Corrupt(path + ": manifest checksum mismatch");
  }
  if (LoadBytes<uint64_t>(in.data()) != kManifestMagic ||
      LoadBytes<uint32_t>(in.data() + 8) != kManifestVersion) {
    return Status::Corrupt(path + ": not an SSD-PS manifest (magic or version)");
  }
  m->floats = static_cast<int32_t>(LoadBytes<uint32_t>(in.data() + 12));
  m->next_seq = LoadBytes<uint64_t>(in.data() + 16);
  m->tag = LoadBytes<uint64_t>(in.data() + 24);
  m->identity = {LoadBytes<uint64_t>(in.data() + 32), LoadBytes<uint64_t>(in.data() + 40)};
  const uint64_t files = LoadBytes<uint64_t>(in.data() + 48);
  if (files != (body - kFixedBytes) / kEntryBytes || (body - kFixedBytes) % kEntryBytes != 0) {
    return Status::Corrupt(path + ": manifest file count disagrees with its size");
  }
  m->files.resize(files);
  for (uint64_t i = 0; i < files; ++i) {
    const unsigned char* e = in.data() + kFixedBytes + i * kEntryBytes;
    m->files[i] = {LoadBytes<uint64_t>(e), LoadBytes<uint64_t>(e + 8), LoadBytes<uint64_t>(e + 16)};
    if (m->files[i].seq >= m->next_seq) {
      return Status::Corrupt(path + ": manifest lists a file at or above next_seq");
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteManifest(const std::string& dir, const Manifest& manifest, bool sync,
                     SsdWriteFault* fault, bool* replaced) {
  if (replaced != nullptr) *replaced = false;
  const std::string temp = dir + "/" + kManifestTempName;
  const std::string final_path = dir + "/" + kManifestName;
  const std::vector<unsigned char> bytes = Encode(manifest);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", temp);
  if (const int injected = fault != nullptr ? fault->NextWrite() : 0; injected != 0) {
    Status status = WriteHalfThenFail(fd, bytes.data(), bytes.size(), injected, temp);
    ::close(fd);
    return status;
  }
  Status status = WriteAll(fd, bytes.data(), bytes.size(), temp);
  if (status.ok() && sync && ::fdatasync(fd) != 0) status = ErrnoStatus("fdatasync", temp);
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus("close", temp);
  if (!status.ok()) return status;
  if (::rename(temp.c_str(), final_path.c_str()) != 0) return ErrnoStatus("rename", temp);
  if (replaced != nullptr) *replaced = true;
  return sync ? SyncDirectory(dir) : Status::Ok();
}

Status ReadManifest(const std::string& dir, Manifest* manifest, bool* found) {
  const std::string path = dir + "/" + kManifestName;
  *found = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus("open", path);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status status = ErrnoStatus("fstat", path);
    ::close(fd);
    return status;
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(st.st_size));
  Status status = ReadAllAt(fd, bytes.data(), bytes.size(), 0, path);
  ::close(fd);
  if (!status.ok()) return status;
  *found = true;
  return Decode(bytes, path, manifest);
}

}  // namespace troupe::paramserver::ssd
