// Long documents (issue 13): mail- and web-page-like text of 2-4 KB, the
// length at which PostgreSQL compresses a text value and often moves it out
// of line (TOAST), unlike the 2-5 short paragraphs of make_documents.
//
// A document is a list of blocks, each a run of Zipf word ranks with a kind
// that decides how it is rendered:
//  mail  header (From/To/Date/Subject), text paragraphs wrapped at 72
//        columns, a quoted paragraph ("> ", a copy of an earlier one, as
//        replies quote), sometimes a list, a signature block ("-- ");
//  web   title and navigation line, unwrapped paragraphs, lists, a line of
//        links (URLs), a copyright footer.
// Everything that is not a word (dates, phone numbers, the accents of a few
// words) is derived from the words, never drawn, so a verbatim copy renders
// to the same shingles and edits are the only source of difference.
// Variants are made as for short documents (word substitution, insertion,
// deletion, swaps) on all blocks; blocks are not shuffled.
#include <algorithm>
#include <cmath>

#include "gen/corpus.h"

namespace gen {

namespace {

using Words = std::vector<int>;

enum Kind : uint8_t { kHeader, kText, kQuote, kList, kLinks, kSignature, kFooter };

struct Block {
    Kind kind;
    Words words;
};

struct LongDoc {
    bool mail;
    std::vector<Block> blocks;
};

// Rendered bytes are about this many per word (a word is 5-6 bytes with its
// space, plus punctuation, quote marks and line structure).
constexpr double kBytesPerWord = 6.6;

uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

uint64_t words_hash(const Words &w) {
    uint64_t h = 0x6c6f6e67ULL;
    for (int r : w) h = mix(h ^ static_cast<uint64_t>(r));
    return h;
}

Words draw_words(Rng &rng, const Vocabulary &vocab, int64_t n) {
    Words w(n);
    for (int &r : w) r = vocab.draw_rank(rng);
    return w;
}

LongDoc base_long(Rng &rng, const Vocabulary &vocab) {
    LongDoc d;
    d.mail = rng.chance(0.6);
    const double target = static_cast<double>(rng.range(2250, 3750));
    double bytes = 0;
    auto add = [&](Kind k, Words w) {
        bytes += static_cast<double>(w.size()) * kBytesPerWord + 12;
        d.blocks.push_back(Block{k, std::move(w)});
    };
    // Header: sender first and last name, domain, recipient, subject (mail);
    // title words and four navigation words (web).
    add(kHeader, draw_words(rng, vocab, d.mail ? 9 : 10));
    const double tail = d.mail ? 6 * kBytesPerWord + 60 : 3 * kBytesPerWord + 60;
    bool quoted = false;
    while (bytes + tail < target) {
        const double u = rng.uniform();
        const size_t ntext = std::count_if(d.blocks.begin(), d.blocks.end(),
                                           [](const Block &b) { return b.kind == kText; });
        if (d.mail && !quoted && ntext >= 1 && u < 0.25) {
            // A reply quotes one of the earlier paragraphs.
            std::vector<const Block *> texts;
            for (const Block &b : d.blocks)
                if (b.kind == kText) texts.push_back(&b);
            add(kQuote, texts[rng.range(0, static_cast<int64_t>(texts.size()) - 1)]->words);
            quoted = true;
        } else if (u < 0.35) {
            add(kList, draw_words(rng, vocab, rng.range(12, 40)));
        } else if (!d.mail && u < 0.45) {
            add(kLinks, draw_words(rng, vocab, 3 * rng.range(2, 4)));
        } else {
            add(kText, draw_words(rng, vocab, rng.range(30, 90)));
        }
    }
    if (d.mail) {
        Words sig{d.blocks[0].words[0], d.blocks[0].words[1]};  // the sender signs
        for (int r : draw_words(rng, vocab, 4)) sig.push_back(r);
        add(kSignature, std::move(sig));
    } else {
        add(kFooter, Words{d.blocks[0].words[0], d.blocks[0].words[1]});  // the site's name
    }
    return d;
}

LongDoc edit_long(const LongDoc &src, double target_j, Rng &rng, const Vocabulary &vocab) {
    std::vector<Words> paras;
    for (const Block &b : src.blocks) paras.push_back(b.words);
    paras = edit_paragraphs(paras, target_j, rng, vocab, false);
    LongDoc d = src;
    for (size_t i = 0; i < d.blocks.size(); ++i) d.blocks[i].words = std::move(paras[i]);
    return d;
}

// A few mid-frequency words carry an accent (café, naïve): real mail and web
// text is mostly, not only, ASCII.
std::string word_of(const Vocabulary &vocab, int rank) {
    std::string w = vocab.word(rank);
    if (rank >= 300 && rank % 37 == 0) {
        static const struct { char plain; const char *accented; } kAccents[] = {
            {'e', "\xc3\xa9"}, {'a', "\xc3\xa0"}, {'o', "\xc3\xb6"}, {'u', "\xc3\xbc"}, {'i', "\xc3\xaf"}};
        for (const auto &a : kAccents) {
            const size_t p = w.find(a.plain);
            if (p != std::string::npos) return w.replace(p, 1, a.accented);
        }
    }
    return w;
}

std::string capitalised(std::string w) {
    if (!w.empty() && w[0] >= 'a' && w[0] <= 'z') w[0] = static_cast<char>(w[0] - 'a' + 'A');
    return w;
}

// Sentences of 5-20 words, capitalised and punctuated, as make_documents
// renders them.
std::string sentences(const Words &words, Rng &rng, const Vocabulary &vocab) {
    std::string out;
    int64_t left = rng.range(5, 20);
    bool start = true;
    for (size_t i = 0; i < words.size(); ++i) {
        if (i > 0) out += ' ';
        out += start ? capitalised(word_of(vocab, words[i])) : word_of(vocab, words[i]);
        start = false;
        if (--left == 0 || i + 1 == words.size()) {
            const double u = rng.uniform();
            out += u < 0.8 ? "." : u < 0.9 ? "?" : "!";
            start = true;
            left = rng.range(5, 20);
        } else if (rng.chance(0.05)) {
            out += ',';
        }
    }
    return out;
}

// Breaks text into lines of at most `width` columns, each starting with prefix.
std::string wrap(const std::string &text, size_t width, const std::string &prefix) {
    std::string out, line;
    size_t i = 0;
    while (i < text.size()) {
        size_t j = text.find(' ', i);
        if (j == std::string::npos) j = text.size();
        const std::string word = text.substr(i, j - i);
        if (!line.empty() && prefix.size() + line.size() + 1 + word.size() > width) {
            out += prefix + line + '\n';
            line.clear();
        }
        if (!line.empty()) line += ' ';
        line += word;
        i = j + 1;
    }
    if (!line.empty()) out += prefix + line + '\n';
    return out;
}

const char *const kDays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
const char *const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
const char *const kTlds[] = {"com", "org", "net", "de", "io"};

std::string at(const Words &w, size_t i, const Vocabulary &vocab) {
    return i < w.size() ? vocab.word(w[i]) : std::string("x");
}

std::string render_block(const Block &b, bool mail, Rng &rng, const Vocabulary &vocab) {
    const Words &w = b.words;
    const uint64_t h = words_hash(w);
    char buf[160];
    switch (b.kind) {
    case kHeader: {
        if (mail) {
            std::snprintf(buf, sizeof buf, "Date: %s, %d %s %d %02d:%02d:%02d +0%d00\n", kDays[h % 7],
                          static_cast<int>(1 + (h >> 3) % 28), kMonths[(h >> 8) % 12],
                          static_cast<int>(2019 + (h >> 12) % 7), static_cast<int>((h >> 16) % 24),
                          static_cast<int>((h >> 21) % 60), static_cast<int>((h >> 27) % 60),
                          static_cast<int>((h >> 33) % 3));
            const std::string tld = kTlds[(h >> 40) % 5];
            std::string out = "From: " + capitalised(at(w, 0, vocab)) + " " + capitalised(at(w, 1, vocab)) +
                              " <" + at(w, 0, vocab) + "." + at(w, 1, vocab) + "@" + at(w, 2, vocab) + "." +
                              tld + ">\nTo: " + at(w, 3, vocab) + "@" + at(w, 4, vocab) + "." + tld + "\n" + buf +
                              "Subject: Re: " + capitalised(at(w, 5, vocab));
            for (size_t i = 6; i < w.size(); ++i) out += " " + word_of(vocab, w[i]);
            return out + "\n\n" + "Hi " + capitalised(at(w, 3, vocab)) + ",\n";
        }
        std::string out;
        for (size_t i = 2; i + 4 < w.size(); ++i) out += (i > 2 ? " " : "") + capitalised(word_of(vocab, w[i]));
        out += " | " + capitalised(at(w, 0, vocab)) + capitalised(at(w, 1, vocab)) + "\n\nHome";
        for (size_t i = w.size() >= 4 ? w.size() - 4 : 0; i < w.size(); ++i)
            out += " | " + capitalised(word_of(vocab, w[i]));
        return out + " | Contact\n";
    }
    case kText:
        return mail ? wrap(sentences(w, rng, vocab), 72, "") : sentences(w, rng, vocab) + "\n";
    case kQuote:
        return "On " + std::string(kDays[h % 7]) + ", " + at(w, 0, vocab) + " wrote:\n" +
               wrap(sentences(w, rng, vocab), 72, "> ");
    case kList: {
        // Items of 3-8 words, one per line.
        std::string out;
        size_t i = 0;
        while (i < w.size()) {
            const size_t n = std::min<size_t>(w.size() - i, 3 + (mix(h + i) % 6));
            out += mail ? "  * " : "- ";
            for (size_t j = 0; j < n; ++j) out += (j ? " " : "") + (j ? word_of(vocab, w[i + j]) : capitalised(word_of(vocab, w[i + j])));
            out += "\n";
            i += n;
        }
        return out;
    }
    case kLinks: {
        std::string out = "See also:";
        for (size_t i = 0; i + 2 < w.size(); i += 3) {
            std::snprintf(buf, sizeof buf, "%u", static_cast<unsigned>(mix(h + i) % 90000 + 1000));
            out += " https://www." + at(w, i, vocab) + "." + kTlds[mix(h ^ i) % 5] + "/" + at(w, i + 1, vocab) +
                   "/" + at(w, i + 2, vocab) + "-" + buf + ".html";
        }
        return out + "\n";
    }
    case kSignature:
        std::snprintf(buf, sizeof buf, "+%d (%03d) %03d-%04d", static_cast<int>(1 + h % 49),
                      static_cast<int>(100 + (h >> 8) % 900), static_cast<int>(100 + (h >> 20) % 900),
                      static_cast<int>((h >> 32) % 10000));
        return "Best regards,\n" + capitalised(at(w, 0, vocab)) + "\n\n-- \n" + capitalised(at(w, 0, vocab)) + " " +
               capitalised(at(w, 1, vocab)) + "\n" + capitalised(at(w, 2, vocab)) + " " + at(w, 3, vocab) + ", " +
               capitalised(at(w, 4, vocab)) + " " + capitalised(at(w, 5, vocab)) + "\nPhone: " + buf + "\n";
    case kFooter:
        return "\xc2\xa9 " + std::to_string(2015 + h % 11) + " " + capitalised(at(w, 0, vocab)) +
               capitalised(at(w, 1, vocab)) + ". All rights reserved. Privacy \xc2\xb7 Terms \xc2\xb7 Imprint\n";
    }
    return "";
}

std::string render_long(const LongDoc &d, Rng &rng, const Vocabulary &vocab) {
    std::string out;
    for (size_t i = 0; i < d.blocks.size(); ++i) {
        if (i > 0) out += '\n';
        out += render_block(d.blocks[i], d.mail, rng, vocab);
    }
    return out;
}

}  // namespace

Corpus make_long_documents(const CorpusOptions &opt) {
    const Vocabulary vocab(50000, 1.0, opt.seed ^ 0x766f636162ULL);
    Rng rng(opt.seed ^ 0x6c6f6e67ULL);
    Corpus c;
    c.rows.reserve(opt.rows);
    c.cluster.reserve(opt.rows);
    int32_t cluster = 0;
    while (static_cast<int64_t>(c.rows.size()) < opt.rows) {
        ++cluster;
        const int size = draw_cluster_size(rng, opt);
        std::vector<LongDoc> members{base_long(rng, vocab)};
        for (int v = 1; v < size; ++v) {
            const LongDoc &src = rng.chance(0.7) ? members[0] : members[rng.range(0, v - 1)];
            members.push_back(edit_long(src, draw_target(rng), rng, vocab));
        }
        for (const LongDoc &d : members) {
            if (static_cast<int64_t>(c.rows.size()) == opt.rows) break;
            c.rows.push_back(render_long(d, rng, vocab));
            c.cluster.push_back(cluster);
        }
    }
    return c;
}

}  // namespace gen
