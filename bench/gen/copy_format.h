// PostgreSQL COPY text format: one row per line, columns separated by tabs,
// backslash escapes for the characters that would break that framing.
#pragma once

#include <string>
#include <string_view>

namespace gen {

inline void append_copy_escaped(std::string &out, std::string_view field) {
    for (char ch : field) {
        switch (ch) {
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: out += ch;
        }
    }
}

// Inverse of append_copy_escaped for the escapes it produces.
inline std::string copy_unescape(std::string_view field) {
    std::string out;
    out.reserve(field.size());
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] != '\\' || i + 1 == field.size()) {
            out += field[i];
            continue;
        }
        const char e = field[++i];
        out += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
    }
    return out;
}

}  // namespace gen
