#include "common/protocol/bounded_iarchive.h"

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/detail/archive_serializer_map.hpp>
#include <boost/archive/impl/archive_serializer_map.ipp>
#include <boost/archive/impl/basic_binary_iarchive.ipp>
#include <boost/archive/impl/basic_binary_iprimitive.ipp>

namespace cohort::protocol {

void BoundedIArchive::expect(uint64_t count, size_t item_bytes) const {
    if (count > buffer_.remaining() / std::max<size_t>(item_bytes, 1)) {
        throw boost::archive::archive_exception(
                boost::archive::archive_exception::input_stream_error,
                "a length beyond the bytes left");
    }
}

void BoundedIArchive::load(std::string& text) {
    std::size_t length = 0;
    Primitive::load(length);
    expect(length, 1);
    text.resize(length);
    if (length > 0) {
        load_binary(text.data(), length);
    }
}

void BoundedIArchive::load(bool& flag) {
    unsigned char byte = 0;
    load_binary(&byte, 1);
    if (byte > 1) {
        throw boost::archive::archive_exception(
                boost::archive::archive_exception::input_stream_error, "a bool other than 0 or 1");
    }
    flag = byte == 1;
}

}  // namespace cohort::protocol

// The archive's machinery, instantiated once here as Boost does for its own archives.
namespace boost::archive {
template class detail::archive_serializer_map<cohort::protocol::BoundedIArchive>;
template class basic_binary_iprimitive<cohort::protocol::BoundedIArchive,
                                       char,
                                       std::char_traits<char>>;
template class basic_binary_iarchive<cohort::protocol::BoundedIArchive>;
template class binary_iarchive_impl<cohort::protocol::BoundedIArchive,
                                    char,
                                    std::char_traits<char>>;
}  // namespace boost::archive
