// Boost.Serialization of a struct's fields in order: serialize_fields(ar, a, b, c) is
// `ar & a & b & c`, written as a call so that clang-format does not take it for a
// declaration of references.
#pragma once

namespace cohort {

template <class Archive, class... Fields>
void serialize_fields(Archive& ar, Fields&... fields) {
    (ar & ... & fields);
}

}  // namespace cohort
