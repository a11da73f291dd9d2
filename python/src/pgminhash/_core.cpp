// pgminhash._core: the server's core library (src/core) bound for Python.
//
// Nothing here shingles, hashes or formats on its own: every signature,
// shingle set, text and binary form comes from the same functions the
// PostgreSQL glue calls (src/pg/signature_funcs.cpp, shingle_funcs.cpp,
// type_io.cpp, element.cpp, sig.cpp), so the package's results are the server's by
// construction. What this file adds is the translation: Python objects to
// byte ranges, core results to NumPy arrays and exceptions.
//
// Argument checking (ranges, names, the server's messages) is the Python
// layer's (pgminhash/_options.py); the specs below still clamp what they are
// given, as the core does, so a direct call with bad values cannot crash.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/bbit.h"
#include "core/datasketch.h"
#include "core/hash.h"
#include "core/jaccard.h"
#include "core/lsh_params.h"
#include "core/oph.h"
#include "core/shingle.h"
#include "core/sig_format.h"
#include "core/signature.h"

namespace py = pybind11;
using minhash::HashFamily;
using minhash::Status;
using minhash::ValueWidth;

namespace {

using Values = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;

// The binary form's header as the server sends it (type_io.cpp, minhash.h):
// format version 1; flags hold the family in the low 4 bits and the width
// code in bits 4-5 (minhash_flags_valid); bits 6-7 are reserved and 0.
constexpr int kFormatVersion = 1;
constexpr int kFlagsFamilyMask = 0x0F;
constexpr int kFlagsWidthShift = 4;
constexpr int kFlagsWidthMask = 0x30;

// A core Status other than Ok as a Python exception (what call_core_until_done
// turns into 53200 / XX000 in the server). Nothing here polls for
// interrupts, so Interrupted does not occur.
void raise_status(Status st, const char *too_large) {
    switch (st) {
    case Status::Ok:
        return;
    case Status::TooLarge:
        throw py::value_error(too_large);
    case Status::OutOfMemory:
        throw std::bad_alloc();
    case Status::Interrupted:
    case Status::Failure:
        break;
    }
    throw std::runtime_error("internal error in the minhash core");
}

HashFamily family_of(int family) {
    if (family < 0 || family >= minhash::kNumHashFamilies)
        throw py::value_error("unknown hash family number " + std::to_string(family));
    return static_cast<HashFamily>(family);
}

// A width by its bits (32, 16, 8), as the server's minhash_width_arg.
ValueWidth width_of(int bits) {
    ValueWidth w;
    if (!minhash::width_of_bits(bits, &w))
        throw py::value_error("bits must be 8, 16 or 32, not " + std::to_string(bits));
    return w;
}

// How a set of elements or a document's shingles become a signature: family,
// num_perm, seed, and the permutation parameters derived from them once (as
// the server caches them in fn_extra) -- or, for the oph family, its one key.
// Immutable; the Python layer keeps the specs of recent argument
// combinations.
struct SignSpec {
    SignSpec(int family, int num_perm, uint64_t seed) : perm(new minhash::PermutationFamily) {
        minhash::init_permutation_family(perm.get(), num_perm, seed, family_of(family));
        if (perm->kind == HashFamily::Oph)
            minhash::init_oph_family(&oph, perm->num_perm, seed);
    }
    int family() const { return static_cast<int>(perm->kind); }
    int num_perm() const { return perm->num_perm; }  // clamped by the core
    uint64_t seed() const { return perm->seed; }
    bool is_oph() const { return perm->kind == HashFamily::Oph; }

    std::shared_ptr<minhash::PermutationFamily> perm;
    minhash::OphFamily oph{};
};

// Which units form a shingle (the server's minhash_shingle_spec), and what
// the document leaves out (minhash_ignore_arg: kIgnore* flags). k = 0 is the
// unit's default; larger than the core's maximum is clamped by it.
struct ShingleArgs {
    ShingleArgs(int unit, int k, int ignore) {
        if (unit < 0 || unit > static_cast<int>(minhash::ShingleUnit::CharNoSpace))
            throw py::value_error("unknown shingle unit number " + std::to_string(unit));
        if (ignore < 0 || ignore > minhash::kIgnoreAll)
            throw py::value_error("unknown ignore flags " + std::to_string(ignore));
        spec.unit = static_cast<minhash::ShingleUnit>(unit);
        spec.k = k <= 0 ? minhash::default_shingle_size(spec.unit) : k;
        spec.k = minhash::clamp_shingle_size(spec);
        spec.ignore = static_cast<uint8_t>(ignore);
    }
    minhash::ShingleSpec spec;
};

// ignore => '...' as flags, with the server's message (minhash_ignore_arg,
// which echoes at most 40 bytes of the bad name).
int parse_ignore(std::string_view list) {
    uint8_t flags = 0;
    std::string_view bad;
    if (!minhash::parse_ignore(list, &flags, &bad)) {
        size_t shown = std::min<size_t>(bad.size(), 40);
        while (shown < bad.size() && shown > 0 && (static_cast<uint8_t>(bad[shown]) & 0xC0) == 0x80)
            shown--;
        throw py::value_error("unknown ignore option \"" + std::string(bad.substr(0, shown)) +
                              (shown < bad.size() ? "...\"" : "\"") +
                              " (valid options are \"accents\" and \"punctuation\", separated by a comma)");
    }
    return flags;
}

// A str's UTF-8 bytes (what minhash_doc_utf8 hands the core in a UTF-8
// database). An ASCII str is its own UTF-8, read in place; any other is
// encoded into a temporary bytes object (PyUnicode_AsUTF8AndSize would keep
// a second copy of every document alive as long as its str). A lone
// surrogate, which PostgreSQL's text cannot hold, raises UnicodeEncodeError.
class Utf8 {
  public:
    explicit Utf8(const py::handle &s) {
        PyObject *o = s.ptr();
        if (PyUnicode_IS_COMPACT_ASCII(o)) {
            view_ = std::string_view(static_cast<const char *>(PyUnicode_DATA(o)),
                                     static_cast<size_t>(PyUnicode_GET_LENGTH(o)));
            return;
        }
        encoded_ = py::reinterpret_steal<py::object>(PyUnicode_AsUTF8String(o));
        if (!encoded_)
            throw py::error_already_set();
        view_ = std::string_view(PyBytes_AS_STRING(encoded_.ptr()),
                                 static_cast<size_t>(PyBytes_GET_SIZE(encoded_.ptr())));
    }
    std::string_view view() const { return view_; }

  private:
    py::object encoded_;
    std::string_view view_;
};

Values new_values(int n) { return Values(static_cast<py::ssize_t>(n)); }

// A signature's values as a contiguous uint32 array, checked for length.
Values checked_values(const Values &v, const char *what) {
    if (v.ndim() != 1 || v.size() < minhash::kMinNumPerm || v.size() > minhash::kMaxNumPerm)
        throw py::value_error(std::string(what) + " must have 1 to " +
                              std::to_string(minhash::kMaxNumPerm) + " values");
    return v;
}

Values sign_text(const py::str &doc, const ShingleArgs &shingle, const SignSpec &sign) {
    const Utf8 text(doc);
    const std::string_view utf8 = text.view();
    Values out = new_values(sign.num_perm());
    uint32_t *values = out.mutable_data();
    const minhash::PermutationFamily &perm = *sign.perm;
    Status st;
    {
        // The core touches only the str's bytes, the spec and the array.
        py::gil_scoped_release unlocked;
        minhash::signature_init(values, perm.num_perm);
        // oph: the undensified sketch, as the server stores it
        st = sign.is_oph()
                 ? minhash::oph_sketch_of_text(sign.oph, utf8, shingle.spec, values, nullptr)
                 : minhash::signature_of_text(perm, utf8, shingle.spec, values, nullptr);
    }
    raise_status(st, "document too large to shingle");
    return out;
}

// The bytes that identify a set element, as src/pg/element.cpp chooses them
// for the array types that have a Python counterpart: text (str) as UTF-8,
// integers in decimal, booleans as PostgreSQL prints them ("t", "f"), bytea
// (bytes, bytearray) as its bytes. Any other object goes through convert()
// (pgminhash/_elements.py), which returns bytes or raises TypeError.
class ElementReader {
  public:
    explicit ElementReader(py::object convert) : convert_(std::move(convert)) {}

    // false for None (NULL elements are skipped, as in the server)
    bool read(const py::handle &item, std::string_view *out) {
        PyObject *o = item.ptr();
        if (o == Py_None)
            return false;
        if (PyUnicode_Check(o)) {
            text_.emplace(item);
            *out = text_->view();
            return true;
        }
        if (PyBytes_Check(o)) {
            *out = std::string_view(PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
            return true;
        }
        if (PyByteArray_Check(o)) {
            *out = std::string_view(PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o));
            return true;
        }
        if (PyBool_Check(o)) {
            *out = o == Py_True ? std::string_view("t") : std::string_view("f");
            return true;
        }
        if (PyLong_Check(o)) {
            // int's own decimal form: an IntEnum member's str() is its name
            keep_ = py::reinterpret_steal<py::object>(PyLong_Type.tp_repr(o));
            if (!keep_)
                throw py::error_already_set();
            text_.emplace(keep_);
            *out = text_->view();
            return true;
        }
        keep_ = convert_(item);
        if (!PyBytes_Check(keep_.ptr()))
            throw py::type_error("element conversion must return bytes");
        *out = std::string_view(PyBytes_AS_STRING(keep_.ptr()), PyBytes_GET_SIZE(keep_.ptr()));
        return true;
    }

  private:
    py::object convert_;
    // what the last out points into, when it is not the item's own buffer
    py::object keep_;
    std::optional<Utf8> text_;
};

// minhash(anyarray): the set of non-NULL elements, repeats changing nothing.
Values sign_elements(const py::iterable &elements, const SignSpec &sign, py::object convert) {
    constexpr size_t kBatch = 256;  // as sign_array in the server
    const minhash::PermutationFamily &perm = *sign.perm;
    Values out = new_values(sign.num_perm());
    uint32_t *values = out.mutable_data();
    minhash::signature_init(values, perm.num_perm);
    ElementReader reader(std::move(convert));
    uint64_t hashes[kBatch];
    size_t n = 0;
    // the batch folded in as sign_array does: one bin per element for oph
    auto fold = [&] {
        if (sign.is_oph())
            minhash::oph_update(sign.oph, hashes, n, values);
        else
            minhash::signature_update(perm, hashes, n, values);
        n = 0;
    };
    for (const py::handle item : elements) {
        std::string_view bytes;
        if (!reader.read(item, &bytes))
            continue;
        hashes[n++] = minhash::family_hash(perm.kind, bytes.data(), bytes.size());
        if (n == kBatch)
            fold();
    }
    if (n > 0)
        fold();
    return out;
}

// jaccard(anyarray, anyarray): elements compared by the same bytes.
struct ElementList {
    std::vector<std::string> bytes;
    std::vector<minhash::HashedElement> items;

    ElementList(const py::iterable &elements, ElementReader &reader) {
        for (const py::handle item : elements) {
            std::string_view b;
            if (reader.read(item, &b))
                bytes.emplace_back(b);
        }
        for (const std::string &b : bytes)
            items.push_back({minhash::hash_bytes(b.data(), b.size()), b.data(), b.size()});
    }
};

double jaccard_exact(const py::iterable &a, const py::iterable &b, py::object convert) {
    ElementReader reader(std::move(convert));
    ElementList la(a, reader);
    ElementList lb(b, reader);
    std::vector<minhash::HashedElement> scratch(
        std::max<size_t>(1, std::max(la.items.size(), lb.items.size())));
    double result = 0;
    const Status st = minhash::jaccard_exact(la.items.data(), la.items.size(), lb.items.data(),
                                             lb.items.size(), scratch.data(), nullptr, &result);
    raise_status(st, "sets too large");
    return result;
}

py::list shingles(const py::str &doc, const ShingleArgs &shingle) {
    const Utf8 text(doc);
    const std::string_view utf8 = text.view();
    minhash::DistinctShingles set;
    Status st;
    {
        py::gil_scoped_release unlocked;
        st = minhash::distinct_shingles(utf8, shingle.spec, nullptr, SIZE_MAX, &set);
    }
    raise_status(st, "document too large to shingle");
    py::list out(set.size());
    for (size_t i = 0; i < set.size(); i++) {
        const std::string_view s = set[i];
        out[i] = py::str(s.data(), s.size());
    }
    return out;
}

// The values of an oph sketch densified (what is compared and narrowed).
Values densified(int num_perm, uint64_t seed, const uint32_t *sketch) {
    minhash::OphFamily oph;
    minhash::init_oph_family(&oph, num_perm, seed);
    Values out = new_values(num_perm);
    minhash::oph_densify(oph, sketch, out.mutable_data());
    return out;
}

// The 32-bit values of a signature narrowed to bits, as the server narrows
// (minhash_sig_narrow): an oph sketch densified first, then the low bits of
// each value kept. Returned widened (zero-extended), as Signature holds them.
Values narrow(int family, uint64_t seed, const Values &v, int bits) {
    const Values values = checked_values(v, "a signature");
    const ValueWidth w = width_of(bits);
    const int n = static_cast<int>(values.size());
    if (w == ValueWidth::Bits32)
        return values;
    Values dense = family_of(family) == HashFamily::Oph ? densified(n, seed, values.data()) : values;
    std::vector<uint8_t> packed(minhash::value_bytes(w) * static_cast<size_t>(n));
    minhash::narrow_values(dense.data(), n, w, packed.data());
    Values out = new_values(n);
    minhash::widen_values(packed.data(), n, w, out.mutable_data());
    return out;
}

// Values (widened) that fit the width, as minhash_in and minhash_from_array check them.
void check_width(const Values &values, ValueWidth w, const char *what) {
    if (w == ValueWidth::Bits32)
        return;
    const uint32_t limit = (uint32_t(1) << minhash::width_bits(w)) - 1;
    for (py::ssize_t i = 0; i < values.size(); i++)
        if (values.data()[i] > limit)
            throw py::value_error(std::string(what) + ": signatures of " + std::to_string(minhash::width_bits(w)) +
                                  " bits have values from 0 to " + std::to_string(limit) +
                                  "; value " + std::to_string(i + 1) + " is " +
                                  std::to_string(values.data()[i]));
}

py::str format_text(int family, int bits, uint64_t seed, const Values &v) {
    const Values values = checked_values(v, "a signature");
    const ValueWidth w = width_of(bits);
    check_width(values, w, "a signature");
    const int n = static_cast<int>(values.size());
    std::string text(minhash::signature_text_capacity(n), '\0');
    text.resize(minhash::format_signature_text(family_of(family), w, seed, values.data(), n,
                                               &text[0]));
    return py::str(text);
}

// The detail of each text-form error, as minhash_in reports it.
const char *text_error_detail(minhash::SigTextError e) {
    using minhash::SigTextError;
    switch (e) {
    case SigTextError::BadSeed:
        return "Expected a signed 64-bit integer seed at the start.";
    case SigTextError::NoColon:
        return "Expected \":\" after the seed.";
    case SigTextError::NoBracket:
        return "Expected \"[\" after \":\".";
    case SigTextError::Empty:
        return "A signature has at least one value.";
    case SigTextError::BadValue:
        return "Expected an unsigned 32-bit integer value.";
    case SigTextError::TooMany:
        return "A signature has at most 1024 values.";
    case SigTextError::BadSeparator:
        return "Expected \",\" or \"]\" after a value.";
    case SigTextError::Trailing:
        return "Unexpected text after \"]\".";
    case SigTextError::Ok:
        break;
    }
    return "Invalid signature.";
}

[[noreturn]] void bad_literal(std::string_view text, const char *detail) {
    // as minhash_in: the literal cut at 64 bytes, not inside a character
    size_t shown = std::min<size_t>(text.size(), 64);
    while (shown < text.size() && shown > 0 && (static_cast<uint8_t>(text[shown]) & 0xC0) == 0x80)
        shown--;
    const std::string message = std::string("invalid input syntax for type minhash: \"") +
                                std::string(text.substr(0, shown)) +
                                (shown < text.size() ? "...\": " : "\": ") + detail;
    // Set as a str object: bytes given to from_text need not be UTF-8, nor
    // free of NUL, and py::value_error's C string would come out empty or cut.
    const py::object str = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(message.data(), static_cast<py::ssize_t>(message.size()),
                             "backslashreplace"));
    if (!str)
        throw py::error_already_set();
    PyErr_SetObject(PyExc_ValueError, str.ptr());
    throw py::error_already_set();
}

// A family name or width tag where the seed should be (as minhash_in): the
// two out of order (bits16:oph:1:[...]) or one written twice.
bool misplaced_prefix(std::string_view at_seed) {
    HashFamily family;
    ValueWidth width;
    size_t rest = 0;
    if (minhash::parse_family_prefix(at_seed, &family, &rest) && rest > 0)
        return true;
    rest = 0;
    return minhash::parse_width_prefix(at_seed, &width, &rest) && rest > 0;
}

// minhash_in: (family, bits, seed as signed 64-bit, values widened)
std::tuple<int, int, int64_t, Values> parse_text(std::string_view text) {
    HashFamily family = HashFamily::Native;
    ValueWidth width = ValueWidth::Bits32;
    size_t rest = 0;
    size_t after_width = 0;
    if (!minhash::parse_family_prefix(text, &family, &rest))
        bad_literal(text, "Unknown hash family before the seed: valid families are datasketch, "
                          "native and oph.");
    if (!minhash::parse_width_prefix(text.substr(rest), &width, &after_width))
        bad_literal(text, "Unknown width before the seed: valid tags are bits8, bits16 and bits32.");
    rest += after_width;
    std::vector<uint32_t> buf(minhash::kMaxNumPerm);
    int64_t seed = 0;
    int n = 0;
    const minhash::SigTextError e = minhash::parse_signature_text(
        text.substr(rest), &seed, buf.data(), minhash::kMaxNumPerm, &n);
    if (e == minhash::SigTextError::BadSeed && misplaced_prefix(text.substr(rest)))
        bad_literal(text, "The hash family comes first, then the width tag, each at most once, "
                          "then the seed: oph:bits16:1:[...].");
    if (e != minhash::SigTextError::Ok)
        bad_literal(text, text_error_detail(e));
    if (width != ValueWidth::Bits32) {
        const uint32_t limit = (uint32_t(1) << minhash::width_bits(width)) - 1;
        for (int i = 0; i < n; i++)
            if (buf[i] > limit)
                bad_literal(text, ("Signatures of " + std::to_string(minhash::width_bits(width)) +
                                   " bits have values from 0 to " + std::to_string(limit) +
                                   "; value " + std::to_string(i + 1) + " is " +
                                   std::to_string(buf[i]) + ".")
                                      .c_str());
    }
    if (family == HashFamily::Datasketch &&
        (seed < 0 || static_cast<uint64_t>(seed) > minhash::kMaxDatasketchSeed))
        bad_literal(text, "A datasketch seed is between 0 and 4294967295.");
    Values values = new_values(n);
    std::copy(buf.begin(), buf.begin() + n, values.mutable_data());
    return {static_cast<int>(family), minhash::width_bits(width), seed, std::move(values)};
}

py::bytes encode_binary(int family, int bits, uint64_t seed, const Values &v) {
    const Values values = checked_values(v, "a signature");
    const ValueWidth w = width_of(bits);
    check_width(values, w, "a signature");
    const int n = static_cast<int>(values.size());
    std::string out(minhash::signature_binary_size(n, w), '\0');
    const int flags = static_cast<int>(family_of(family)) | (static_cast<int>(w) << kFlagsWidthShift);
    minhash::encode_signature_binary(kFormatVersion, flags, n, seed, values.data(),
                                     reinterpret_cast<uint8_t *>(&out[0]), w);
    return py::bytes(out);
}

// minhash_recv, with its checks and messages: (family, bits, seed as unsigned, values widened)
std::tuple<int, int, uint64_t, Values> decode_binary(const py::object &data) {
    if (!PyObject_CheckBuffer(data.ptr()))
        throw py::type_error(std::string("the binary form is a bytes-like object, not ") +
                             Py_TYPE(data.ptr())->tp_name);
    const py::buffer_info info = py::reinterpret_borrow<py::buffer>(data).request();
    if (info.ndim != 1 || info.itemsize != 1)
        throw py::type_error("the binary form is a bytes-like object");
    const size_t have = static_cast<size_t>(info.size);
    // A strided view (memoryview(b)[::2], a reversed slice) is read in its
    // order: copied, since the decoders walk the bytes from ptr onwards.
    std::string gathered;
    const auto *bytes = static_cast<const uint8_t *>(info.ptr);
    if (have > 1 && info.strides[0] != 1) {
        gathered.resize(have);
        for (size_t i = 0; i < have; i++)
            gathered[i] = static_cast<char>(bytes[static_cast<py::ssize_t>(i) * info.strides[0]]);
        bytes = reinterpret_cast<const uint8_t *>(gathered.data());
    }
    minhash::SigBinaryHeader h;
    if (!minhash::decode_signature_header(bytes, have, &h))
        throw py::value_error("invalid binary minhash: expected " +
                              std::to_string(minhash::kSigBinaryHeader) + " bytes, got " +
                              std::to_string(have));
    if (h.version != kFormatVersion)
        throw py::value_error("unsupported minhash binary format version " +
                              std::to_string(h.version));
    if ((h.flags & ~(kFlagsFamilyMask | kFlagsWidthMask)) != 0 ||
        (h.flags & kFlagsFamilyMask) >= minhash::kNumHashFamilies ||
        ((h.flags & kFlagsWidthMask) >> kFlagsWidthShift) >= minhash::kNumValueWidths)
        throw py::value_error("invalid flags " + std::to_string(h.flags) + " in binary minhash");
    if (h.num_perm < minhash::kMinNumPerm || h.num_perm > minhash::kMaxNumPerm)
        throw py::value_error("invalid num_perm " + std::to_string(h.num_perm) +
                              " in binary minhash");
    const auto width = static_cast<ValueWidth>((h.flags & kFlagsWidthMask) >> kFlagsWidthShift);
    const size_t need = minhash::signature_binary_size(h.num_perm, width);
    if (have != need)
        throw py::value_error("invalid binary minhash: expected " + std::to_string(need) +
                              " bytes, got " + std::to_string(have));
    const HashFamily family = static_cast<HashFamily>(h.flags & kFlagsFamilyMask);
    if (family == HashFamily::Datasketch && h.seed > minhash::kMaxDatasketchSeed)
        // signed, as the server's message and minhash_seed() show a seed
        throw py::value_error("invalid datasketch seed " +
                              std::to_string(static_cast<int64_t>(h.seed)) +
                              " in binary minhash");
    Values values = new_values(h.num_perm);
    minhash::decode_signature_values(bytes, have, h.num_perm, values.mutable_data(), width);
    return {static_cast<int>(family), minhash::width_bits(width), h.seed, std::move(values)};
}

void check_same_length(const Values &a, const Values &b) {
    if (a.size() != b.size())
        throw py::value_error("signatures of different lengths");
}

// jaccard(minhash, minhash) of two compatible signatures as the server
// estimates it (minhash_sig_estimate): a 32-bit oph pair densified, then the
// share of equal positions corrected for chance agreement of the low bits
// (b-bit minwise hashing, core/bbit.h; at 32 bits the plain share).
double jaccard_estimate(int family, int bits, uint64_t seed, const Values &a, const Values &b) {
    check_same_length(checked_values(a, "a signature"), checked_values(b, "a signature"));
    const int k = static_cast<int>(a.size());
    const ValueWidth w = width_of(bits);
    int same;
    if (family_of(family) == HashFamily::Oph && w == ValueWidth::Bits32)
        same = minhash::matching_values(densified(k, seed, a.data()).data(),
                                        densified(k, seed, b.data()).data(), k);
    else  // widened values agree where their packed forms do
        same = minhash::matching_values(a.data(), b.data(), k);
    return minhash::bbit_jaccard(same, k, bits);
}

Values merge(const Values &a, const Values &b) {
    check_same_length(checked_values(a, "a signature"), checked_values(b, "a signature"));
    const int n = static_cast<int>(a.size());
    Values out = new_values(n);
    std::copy(a.data(), a.data() + n, out.mutable_data());
    minhash::signature_merge(out.mutable_data(), b.data(), n);
    return out;
}

// minhash_cardinality of a 32-bit signature (the Python layer refuses
// compact ones, as the server does); an oph sketch by its own estimator.
double cardinality(int family, const Values &v) {
    const Values values = checked_values(v, "a signature");
    const int n = static_cast<int>(values.size());
    if (family_of(family) == HashFamily::Oph)
        return minhash::oph_cardinality_estimate(values.data(), n);
    return minhash::cardinality_estimate(values.data(), n);
}

std::tuple<int, int, double, double> lsh_params(double threshold, int num_perm, double fp_weight,
                                                double fn_weight) {
    const minhash::LshParams p =
        minhash::choose_lsh_params(threshold, num_perm, fp_weight, fn_weight);
    return {p.bands, p.rows, p.false_positive_area, p.false_negative_area};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "The minhash extension's core library (src/core), as the server runs it.";

    py::tuple families(minhash::kNumHashFamilies);
    for (int i = 0; i < minhash::kNumHashFamilies; i++)
        families[i] = minhash::hash_family_name(static_cast<HashFamily>(i));
    m.attr("FAMILIES") = families;
    py::tuple units(3);
    for (int i = 0; i < 3; i++)
        units[i] = minhash::shingle_unit_name(static_cast<minhash::ShingleUnit>(i));
    m.attr("UNITS") = units;
    m.attr("MIN_NUM_PERM") = minhash::kMinNumPerm;
    m.attr("MAX_NUM_PERM") = minhash::kMaxNumPerm;
    m.attr("DEFAULT_NUM_PERM") = minhash::kDefaultNumPerm;
    m.attr("DEFAULT_SEED") = minhash::kDefaultSeed;
    m.attr("MAX_SHINGLE_SIZE") = minhash::kMaxShingleSize;
    m.attr("MAX_DATASKETCH_SEED") = minhash::kMaxDatasketchSeed;
    m.attr("EMPTY_VALUE") = minhash::kEmptyValue;
    py::tuple widths(minhash::kNumValueWidths);
    for (int i = 0; i < minhash::kNumValueWidths; i++)
        widths[i] = minhash::width_bits(static_cast<ValueWidth>(i));
    m.attr("BITS") = widths;  // (32, 16, 8)
    m.attr("IGNORE_ACCENTS") = int(minhash::kIgnoreAccents);
    m.attr("IGNORE_PUNCTUATION") = int(minhash::kIgnorePunctuation);

    m.def("default_k",
          [](int unit) { return minhash::default_shingle_size(ShingleArgs(unit, 1, 0).spec.unit); });

    py::class_<SignSpec>(m, "SignSpec")
        .def(py::init<int, int, uint64_t>(), py::arg("family"), py::arg("num_perm"),
             py::arg("seed"))
        .def_property_readonly("family", &SignSpec::family)
        .def_property_readonly("num_perm", &SignSpec::num_perm)
        .def_property_readonly("seed", &SignSpec::seed);
    py::class_<ShingleArgs>(m, "ShingleSpec")
        .def(py::init<int, int, int>(), py::arg("unit"), py::arg("k"), py::arg("ignore") = 0)
        .def_property_readonly("unit",
                               [](const ShingleArgs &s) { return static_cast<int>(s.spec.unit); })
        .def_property_readonly("k", [](const ShingleArgs &s) { return s.spec.k; })
        .def_property_readonly("ignore", [](const ShingleArgs &s) { return int(s.spec.ignore); });
    m.def("parse_ignore", &parse_ignore, py::arg("list"));

    m.def("sign_text", &sign_text, py::arg("doc"), py::arg("shingle"), py::arg("sign"));
    m.def("sign_elements", &sign_elements, py::arg("elements"), py::arg("sign"),
          py::arg("convert"));
    m.def("shingles", &shingles, py::arg("doc"), py::arg("shingle"));
    m.def("jaccard_exact", &jaccard_exact, py::arg("a"), py::arg("b"), py::arg("convert"));
    m.def("format_text", &format_text, py::arg("family"), py::arg("bits"), py::arg("seed"),
          py::arg("values"));
    m.def("parse_text", &parse_text, py::arg("text"));
    m.def("encode_binary", &encode_binary, py::arg("family"), py::arg("bits"), py::arg("seed"),
          py::arg("values"));
    m.def("decode_binary", &decode_binary, py::arg("data"));
    m.def("narrow", &narrow, py::arg("family"), py::arg("seed"), py::arg("values"),
          py::arg("bits"));
    m.def("jaccard_estimate", &jaccard_estimate, py::arg("family"), py::arg("bits"),
          py::arg("seed"), py::arg("a"), py::arg("b"));
    m.def("merge", &merge, py::arg("a"), py::arg("b"));
    m.def("cardinality", &cardinality, py::arg("family"), py::arg("values"));
    m.def("lsh_params", &lsh_params, py::arg("threshold"), py::arg("num_perm"),
          py::arg("fp_weight"), py::arg("fn_weight"));
}
