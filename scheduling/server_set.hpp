// ServerSet: a set of server indices, iterated in index order, kept as one bit per server.
//
// The ledger moves a server between its free-GPU buckets every time a round places a part on it:
// thousands of moves a round on a large cluster. A tree set paid a node's unlinking, relinking and
// rebalancing for each, more than the placement's own search; here a move is two bit flips, and
// finding a bucket's lowest server scans a word per 64 servers.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace troupe::scheduling {

class ServerSet {
 public:
  // Servers 0 .. capacity-1 may be inserted.
  explicit ServerSet(int32_t capacity = 0) : words_((static_cast<size_t>(capacity) + 63) / 64) {}

  void insert(int32_t server) {
    uint64_t& word = words_[Word(server)];
    size_ += (word & Bit(server)) == 0;
    word |= Bit(server);
  }
  void erase(int32_t server) {
    uint64_t& word = words_[Word(server)];
    size_ -= (word & Bit(server)) != 0;
    word &= ~Bit(server);
  }
  bool contains(int32_t server) const { return (words_[Word(server)] & Bit(server)) != 0; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = int32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const int32_t*;
    using reference = int32_t;

    const_iterator() = default;
    int32_t operator*() const { return server_; }
    const_iterator& operator++() {
      server_ = set_->NextFrom(server_ + 1);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& o) const { return server_ == o.server_; }

   private:
    friend class ServerSet;
    const_iterator(const ServerSet* set, int32_t server) : set_(set), server_(server) {}
    const ServerSet* set_ = nullptr;
    int32_t server_ = -1;  // -1: the end
  };

  const_iterator begin() const { return const_iterator(this, empty() ? -1 : NextFrom(0)); }
  const_iterator end() const { return const_iterator(this, -1); }

 private:
  static size_t Word(int32_t server) { return static_cast<size_t>(server) >> 6; }
  static uint64_t Bit(int32_t server) { return uint64_t{1} << (server & 63); }

  // The lowest member at or above `from`, or -1.
  int32_t NextFrom(int32_t from) const {
    size_t w = Word(from);
    if (w >= words_.size()) return -1;
    uint64_t bits = words_[w] & (~uint64_t{0} << (from & 63));
    while (bits == 0) {
      if (++w == words_.size()) return -1;
      bits = words_[w];
    }
    return static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(bits)));
  }

  std::vector<uint64_t> words_;
  size_t size_ = 0;
};

}  // namespace troupe::scheduling
