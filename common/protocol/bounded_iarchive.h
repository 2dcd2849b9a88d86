// The binary input archive message bodies and stored records are decoded with: Boost's
// binary archive, except that no length or count read from the bytes can make it allocate
// more than the bytes could hold. Boost's own resizes a string or vector to whatever length
// prefix it reads, so a 14-byte body could ask for terabytes (found by tests/fuzz).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include <boost/archive/binary_iarchive_impl.hpp>
#include <boost/archive/detail/register_archive.hpp>
#include <boost/serialization/array_wrapper.hpp>
#include <boost/serialization/collection_size_type.hpp>
#include <boost/serialization/is_bitwise_serializable.hpp>
#include <boost/serialization/item_version_type.hpp>
#include <boost/serialization/library_version_type.hpp>
#include <boost/serialization/nvp.hpp>

namespace cohort::protocol {

// Reads bytes in place, without copying them into a stream.
class BodyBuffer : public std::streambuf {
public:
    explicit BodyBuffer(std::string_view bytes) {
        char* begin = const_cast<char*>(bytes.data());  // only read: get area, no put area
        setg(begin, begin, begin + bytes.size());
    }

    size_t remaining() const { return static_cast<size_t>(egptr() - gptr()); }
};

class BoundedIArchive
    : public boost::archive::binary_iarchive_impl<BoundedIArchive, char, std::char_traits<char>> {
    using Impl =
            boost::archive::binary_iarchive_impl<BoundedIArchive, char, std::char_traits<char>>;
    using Primitive =
            boost::archive::basic_binary_iprimitive<BoundedIArchive, char, std::char_traits<char>>;

public:
    explicit BoundedIArchive(BodyBuffer& buffer)
        // no_codecvt: a binary archive converts no characters, and imbuing a locale costs
        // more than decoding a small message.
        : Impl(buffer, boost::archive::no_header | boost::archive::no_codecvt), buffer_(buffer) {}

    // Throws archive_exception unless `count` items of `item_bytes` each are still unread.
    void expect(uint64_t count, size_t item_bytes) const;

    // Called by Boost's archive machinery (public: its base classes call them too).
    using Primitive::load;
    void load(std::string& text);
    void load(bool& flag);  // a byte other than 0 or 1 is refused, not loaded into a bool

    template <class T>
    void load_override(T& value) {
        Impl::load_override(value);
    }

    void load_override(boost::serialization::collection_size_type& count) {
        Impl::load_override(count);
        expect(count, 1);  // every item takes a byte at least
    }

private:
    BodyBuffer& buffer_;
};

// Vectors: arithmetic ones as one block once its size is checked; others grow item by item as
// items are really read, never to a forged count up front. The layout is binary_oarchive's.
template <class Item, class Allocator>
void load(BoundedIArchive& archive, std::vector<Item, Allocator>& items, const unsigned int) {
    boost::serialization::collection_size_type count;
    archive >> BOOST_SERIALIZATION_NVP(count);
    if constexpr (boost::serialization::is_bitwise_serializable<Item>::value) {
        archive.expect(count, sizeof(Item));
        items.resize(count);
        if (count > 0) {
            archive >> boost::serialization::make_array<Item,
                                                        boost::serialization::collection_size_type>(
                    items.data(), count);
        }
    } else {
        boost::serialization::item_version_type item_version(0);
        if (boost::serialization::library_version_type(3) < archive.get_library_version()) {
            archive >> BOOST_SERIALIZATION_NVP(item_version);
        }
        const size_t kept = std::min<size_t>(items.size(), count);
        items.resize(kept);  // reused, as a long listing decodes into one value frame by frame
        for (size_t i = 0; i < count; ++i) {
            if (i == items.size()) {
                items.emplace_back();
            }
            archive >> boost::serialization::make_nvp("item", items[i]);
        }
    }
}

}  // namespace cohort::protocol

BOOST_SERIALIZATION_REGISTER_ARCHIVE(cohort::protocol::BoundedIArchive)
BOOST_SERIALIZATION_USE_ARRAY_OPTIMIZATION(cohort::protocol::BoundedIArchive)
