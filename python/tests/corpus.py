"""Deterministic test documents and sets covering every class of text the
server's normalizer treats differently (docs/sql.md, "Definitions"): ASCII
and the table-driven fast path, letters of many scripts, digits of other
scripts, combining marks (which continue a word but do not start one),
Malayalam and Devanagari vowel signs and viramas, the case-folding specials
(ß and ẞ to ss, the ligatures ﬁ and ﬃ, İ to i + U+0307, final sigma, Cherokee
and Deseret outside the BMP, ŉ), CJK and scripts without spaces, emoji and
their modifiers and joiners, symbols that are letters (ⓒ, Ⓒ, Ⅻ) and symbols
that are not (©, ™, €), punctuation of many scripts, every kind of white
space, control and format characters, private use and unassigned code
points, and very short, empty and separator-only texts.
"""
import random

FRAGMENTS = {
    "ascii": ["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "DOG",
              "Lorem", "ipsum", "dolor", "sit", "amet", "x", "a1b2", "2024", "42", "README"],
    "latin": ["naïve", "café", "Über", "Größe", "façade", "Ærøskøbing", "jalapeño", "Łódź",
              "Dvořák", "smörgåsbord", "ÉCOLE", "œuvre", "Ǆemal", "ǅ", "ǆ"],
    "combining": ["e\u0301", "cafe\u0301", "n\u0303o", "a\u0308\u0301", "\u0301start",
                  "x\u0327\u0328", "Z\u0351\u0362\u0488", "\u0300\u0301\u0302"],
    "malayalam": ["മലയാളം", "ഭാഷ", "ക്ഷ", "സ്ത്രീ", "കേരളം", "ന്\u200dറ", "ൽ", "ൻ",
                  "\u0d4d", "\u0d3e\u0d3f", "ക്\u200c"],
    "devanagari": ["हिन्दी", "संस्कृतम्", "क्षत्रिय", "नमस्ते", "५६७", "ॐ"],
    "casefold": ["Straße", "STRASSE", "STRAẞE", "ß", "ẞ", "ﬁnance", "ﬃ", "ﬀ", "ﬆ", "İstanbul",
                 "ISTANBUL", "ıi", "İ", "ΣΟΦΙΑΣ", "Σοφιας", "σοφιας", "ς", "ŉ", "ǰ", "ΐ", "ﬓ",
                 "Ꭰ\u13a1", "ꭰ", "𐐀𐐁", "𐐨", "ᾈ", "ᾼ", "ᵻ", "K", "Å", "µ", "ſ", "ǈ"],
    "greek_cyrillic": ["αβγ", "Ωμέγα", "число", "Москва", "ПРИВЕТ", "ёлка", "Ї", "ђ"],
    "rtl": ["مرحبا", "الْعَرَبِيَّة", "שָׁלוֹם", "עברית", "٣٤٥", "۱۲۳", "\u200fRTL\u200e"],
    "cjk": ["日本語のテキスト", "中文", "漢字", "ひらがな", "カタカナ", "ｶﾀｶﾅ", "한국어", "조선말",
            "〇", "𠀀𠀁", "㐀"],
    "thai_lao": ["ภาษาไทย", "สวัสดีครับ", "ພາສາລາວ", "ဗမာ", "ខ្មែរ"],
    "emoji": ["🙂", "👍🏽", "👨\u200d👩\u200d👧", "🏳️\u200d🌈", "🇫🇷", "🇺🇸", "❤️", "1️⃣",
              "🤷\u200d♀️", "😀😃", "🦄"],
    "letter_symbols": ["ⓒ", "Ⓒ", "ⓐⓑⓒ", "Ⅻ", "ⅻ", "Ⅸ", "ℌ", "ℵ", "Ａｂｃ", "ａＢＣ", "𝐀𝐁𝐂",
                       "𝔘𝔫𝔦", "ª", "º", "ᴬ"],
    "symbols": ["©", "®", "™", "€", "£", "$", "+", "=", "<", ">", "^", "`", "|", "~", "°", "±",
                "∞", "√", "≠", "♥", "★", "→", "½", "²", "¹", "⁴", "№"],
    "punctuation": [".", ",", "!", "?", ";", ":", "-", "—", "–", "'", '"', "“", "”", "‘", "’",
                    "«", "»", "¿", "¡", "…", "、", "。", "「", "」", "‐", "_", "(", ")", "[", "]",
                    "{", "}", "/", "\\", "@", "#", "%", "&", "*", "·", "•", "§", "¶", "†"],
    "digits": ["0", "123", "٣", "५", "๓", "໕", "１２３", "𝟘𝟙", "Ⅰ", "¼", "3.14", "1,000",
               "0x1F", "-7"],
    "whitespace": [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u2028",
                   "\u2029", "\u1680", "\u202f", "\u205f", "\u000b", "\u000c", "\u0085"],
    "control_format": ["\u0001", "\u001f", "\u007f", "\u0080", "\u009f", "\u200b", "\u200c",
                       "\u200d", "\u2060", "\ufeff", "\u00ad", "\u061c", "\u202e", "\ue000",
                       "\U000f0000", "\u0378", "\ufdd0", "\uffff", "\U0010fffd"],
}

CLASSES = sorted(FRAGMENTS)
SEPARATORS = [" ", " ", " ", "", "\n", ", ", ". ", "\t", "-", "\u3000", "\u00a0"]
SPECIAL_DOCS = ["", " ", "   \t\n", ".,;!?", "—", "a", "A", "ß", "ⓒ", "🙂", "\u0301",
                "\u0d4d", "İ", "ﬁ", "Σ", "x y", "\u200d", "\ufeff", "日", "1 2 3 4 5 6 7 8 9 10"]


def documents(n=1000, seed=20240601):
    """n documents: the special ones, then texts mixing 1 to 4 classes of
    fragments (so every class meets every other), 0 to 120 fragments long."""
    rng = random.Random(seed)
    docs = list(SPECIAL_DOCS)
    i = 0
    while len(docs) < n:
        # every class leads in turn; the others are drawn
        classes = [CLASSES[i % len(CLASSES)]] + rng.sample(CLASSES, rng.randint(0, 3))
        i += 1
        parts = []
        for _ in range(rng.choice([1, 2, 3, 5, 8, 13, 30, 60, 120])):
            parts.append(rng.choice(FRAGMENTS[rng.choice(classes)]))
            parts.append(rng.choice(SEPARATORS))
        docs.append("".join(parts))
    return docs[:n]


def text_sets(n=1000, seed=7):
    """n lists of strings: fragments, shingle-like phrases, the empty string,
    numbers as text (the same elements as integers), repeats and None."""
    rng = random.Random(seed)
    pool = [f for frags in FRAGMENTS.values() for f in frags] + ["", "42", "-7", "0"]
    sets = [[], [""], [None], ["a", "a", "a"], ["1", "2", "3"]]
    while len(sets) < n:
        size = rng.choice([1, 2, 5, 20, 100, 400])
        elems = [rng.choice(pool) if rng.random() < 0.7 else
                 " ".join(rng.choice(pool) for _ in range(rng.randint(2, 5)))
                 for _ in range(size)]
        if rng.random() < 0.2:
            elems.append(None)
        sets.append(elems)
    return sets[:n]


def int_sets(n=1000, seed=11):
    """n lists of bigints: small and large, negative, the extremes, repeats and None."""
    rng = random.Random(seed)
    sets = [[], [0], [None], [1, 1, 1], [-(1 << 63), (1 << 63) - 1], [42, -42]]
    while len(sets) < n:
        size = rng.choice([1, 3, 10, 50, 300])
        scale = rng.choice([10, 1000, 1 << 31, 1 << 62])
        elems = [rng.randint(-scale, scale) for _ in range(size)]
        if rng.random() < 0.2:
            elems.append(None)
        sets.append(elems)
    return sets[:n]
