//! The locales of the catalogs: real locale codes with their scripts and
//! plural forms, and each locale's made-up language (its translations).

use super::super::{mix, unit, Rng};
use super::Catalogs;

/// FNV-1a of a string: a key for `mix`.
fn str_key(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The writing system of a locale: which letters its made-up words use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    Devanagari,
    Han,
    Kana,
    Hangul,
    Thai,
    Georgian,
    Armenian,
}

impl Script {
    /// Consonants and vowels of the alphabetic scripts.
    fn letters(self) -> (&'static str, &'static str) {
        match self {
            Script::Cyrillic => ("бвгджзклмнпрстфхцчшщ", "аеиоуыэюя"),
            Script::Greek => ("βγδζθκλμνξπρστφχψ", "αεηιουωάέί"),
            Script::Arabic => ("بتثجحخدذرزسشصضطعغفقكلمنه", "اوي"),
            Script::Hebrew => ("בגדהזחטכלמנסעפצקרשת", "אוי"),
            Script::Devanagari => ("कखगघचछजझटडतथदधनपफबभमयरलवशसह", "ािीुूेैोौं"),
            Script::Thai => ("กขคงจฉชซญดตถทธนบปผพฟมยรลวสหอ", "ะาิีึืุูเแโ"),
            Script::Georgian => ("ბგდვზთკლმნპჟრსტფქღყშჩცძწჭხჯჰ", "აეიოუ"),
            Script::Armenian => ("բգդզթժլխծկհձղճմյնշչպջռսվտրցփքֆ", "աեէըիոու"),
            _ => ("bcdfghjklmnprstvwz", "aeiou"),
        }
    }

    /// Words separated by spaces (not in Chinese, Japanese or Thai).
    fn spaced(self) -> bool {
        !matches!(self, Script::Han | Script::Kana | Script::Thai)
    }

    /// Has capital letters.
    fn cased(self) -> bool {
        matches!(
            self,
            Script::Latin | Script::Cyrillic | Script::Greek | Script::Armenian
        )
    }
}

/// Plural-Forms headers (nplurals, the header's value), as in real catalogs.
type Plural = (usize, &'static str);
const PL_2: Plural = (2, "nplurals=2; plural=(n != 1);");
const PL_2F: Plural = (2, "nplurals=2; plural=(n > 1);");
const PL_1: Plural = (1, "nplurals=1; plural=0;");
const PL_RU: Plural = (
    4,
    "nplurals=4; plural=(n % 10 == 1 && n % 100 != 11 ? 0 : n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14) ? 1 : n % 10 == 0 || (n % 10 >= 5 && n % 10 <= 9) || (n % 100 >= 11 && n % 100 <= 14)? 2 : 3);",
);
const PL_PL: Plural = (
    4,
    "nplurals=4; plural=(n==1 ? 0 : (n%10>=2 && n%10<=4) && (n%100<12 || n%100>14) ? 1 : n!=1 && (n%10>=0 && n%10<=1) || (n%10>=5 && n%10<=9) || (n%100>=12 && n%100<=14) ? 2 : 3);",
);
const PL_CS: Plural = (
    4,
    "nplurals=4; plural=(n == 1 && n % 1 == 0) ? 0 : (n >= 2 && n <= 4 && n % 1 == 0) ? 1: (n % 1 != 0 ) ? 2 : 3;",
);
const PL_AR: Plural = (
    6,
    "nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 && n%100<=99 ? 4 : 5;",
);
const PL_HR: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
);
const PL_LT: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && (n%100<10 || n%100>=20) ? 1 : 2);",
);
const PL_LV: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2);",
);
const PL_RO: Plural = (
    3,
    "nplurals=3; plural=(n==1?0:(((n%100>19)||((n%100==0)&&(n!=0)))?2:1));",
);
const PL_SL: Plural = (
    4,
    "nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);",
);
const PL_HE: Plural = (
    4,
    "nplurals=4; plural=(n == 1 && n % 1 == 0) ? 0 : (n == 2 && n % 1 == 0) ? 1: (n % 10 == 0 && n % 1 == 0 && n > 10) ? 2 : 3;",
);
const PL_GA: Plural = (
    5,
    "nplurals=5; plural=(n==1 ? 0 : n==2 ? 1 : n<7 ? 2 : n<11 ? 3 : 4);",
);

/// Real locale codes, the most translated first: (code, script, plural
/// forms, accented letters of its Latin alphabet).
const LOCALES: &[(&str, Script, Plural, &str)] = &[
    ("de", Script::Latin, PL_2, "äöüß"),
    ("fr", Script::Latin, PL_2F, "éèàçêô"),
    ("es", Script::Latin, PL_2, "ñáéíóú"),
    ("it", Script::Latin, PL_2, "àèéìòù"),
    ("ja", Script::Kana, PL_1, ""),
    ("pt_BR", Script::Latin, PL_2F, "ãçéâôõá"),
    ("ru", Script::Cyrillic, PL_RU, ""),
    ("zh_Hans", Script::Han, PL_1, ""),
    ("ko", Script::Hangul, PL_1, ""),
    ("nl", Script::Latin, PL_2, "ëï"),
    ("pl", Script::Latin, PL_PL, "ąęłśżźćń"),
    ("sv", Script::Latin, PL_2, "åäö"),
    ("tr", Script::Latin, PL_2, "çğışöü"),
    ("cs", Script::Latin, PL_CS, "čřšžěýáíé"),
    ("uk", Script::Cyrillic, PL_RU, ""),
    ("zh_Hant", Script::Han, PL_1, ""),
    ("pt", Script::Latin, PL_2, "ãçéâôõ"),
    ("da", Script::Latin, PL_2, "æøå"),
    ("fi", Script::Latin, PL_2, "äö"),
    ("nb", Script::Latin, PL_2, "æøå"),
    ("hu", Script::Latin, PL_2, "áéíóöőúüű"),
    ("el", Script::Greek, PL_2, ""),
    ("ro", Script::Latin, PL_RO, "ăâîșț"),
    ("sk", Script::Latin, PL_CS, "áäčďéíľňóôšťúýž"),
    ("ar", Script::Arabic, PL_AR, ""),
    ("he", Script::Hebrew, PL_HE, ""),
    ("id", Script::Latin, PL_1, ""),
    ("vi", Script::Latin, PL_1, "ăâđêôơưạảấầ"),
    ("th", Script::Thai, PL_1, ""),
    ("hi", Script::Devanagari, PL_2, ""),
    ("fa", Script::Arabic, PL_2F, ""),
    ("bg", Script::Cyrillic, PL_2, ""),
    ("ca", Script::Latin, PL_2, "àçèéíïòóúü"),
    ("hr", Script::Latin, PL_HR, "čćđšž"),
    ("sr", Script::Cyrillic, PL_HR, ""),
    ("sl", Script::Latin, PL_SL, "čšž"),
    ("lt", Script::Latin, PL_LT, "ąčęėįšųūž"),
    ("lv", Script::Latin, PL_LV, "āčēģīķļņšūž"),
    ("et", Script::Latin, PL_2, "äõöüšž"),
    ("es_AR", Script::Latin, PL_2, "ñáéíóú"),
    ("es_MX", Script::Latin, PL_2, "ñáéíóú"),
    ("es_CO", Script::Latin, PL_2, "ñáéíóú"),
    ("es_VE", Script::Latin, PL_2, "ñáéíóú"),
    ("en_GB", Script::Latin, PL_2, ""),
    ("en_AU", Script::Latin, PL_2, ""),
    ("eu", Script::Latin, PL_2, ""),
    ("gl", Script::Latin, PL_2, "áéíñóú"),
    ("is", Script::Latin, PL_2, "áðéíóúýþæö"),
    ("ga", Script::Latin, PL_GA, "áéíóú"),
    ("cy", Script::Latin, PL_GA, "âêîôŵŷ"),
    ("mk", Script::Cyrillic, PL_2, ""),
    ("be", Script::Cyrillic, PL_RU, ""),
    ("kk", Script::Cyrillic, PL_2, ""),
    ("ky", Script::Cyrillic, PL_1, ""),
    ("mn", Script::Cyrillic, PL_2, ""),
    ("az", Script::Latin, PL_2, "çəğıöşü"),
    ("ka", Script::Georgian, PL_2, ""),
    ("hy", Script::Armenian, PL_2, ""),
    ("ms", Script::Latin, PL_1, ""),
    ("mr", Script::Devanagari, PL_2, ""),
    ("ne", Script::Devanagari, PL_2, ""),
    ("ur", Script::Arabic, PL_2, ""),
    ("sw", Script::Latin, PL_2, ""),
    ("af", Script::Latin, PL_2, "êëô"),
    ("sq", Script::Latin, PL_2, "çë"),
    ("bs", Script::Latin, PL_HR, "čćđšž"),
    ("sr_Latn", Script::Latin, PL_HR, "čćđšž"),
    ("eo", Script::Latin, PL_2, "ĉĝĥĵŝŭ"),
    ("fy", Script::Latin, PL_2, ""),
    ("lb", Script::Latin, PL_2, "äéë"),
    ("br", Script::Latin, PL_2, ""),
    ("ast", Script::Latin, PL_2, "ñáéíóú"),
    ("ia", Script::Latin, PL_2, ""),
    ("nn", Script::Latin, PL_2, "æøå"),
    ("tt", Script::Cyrillic, PL_1, ""),
    ("udm", Script::Cyrillic, PL_1, ""),
    ("tg", Script::Cyrillic, PL_2, ""),
    ("tk", Script::Latin, PL_2, "çäňöşüýž"),
    ("dsb", Script::Latin, PL_SL, "čěłńřšžź"),
    ("hsb", Script::Latin, PL_SL, "čěłńřšžź"),
    ("kab", Script::Latin, PL_2, "čḍǧḥɣṛṣṭẓ"),
    ("os", Script::Cyrillic, PL_2, ""),
    ("ug", Script::Arabic, PL_2, ""),
    ("ckb", Script::Arabic, PL_2, ""),
    ("ar_DZ", Script::Arabic, PL_AR, ""),
];

/// Regions of the codes made up past the table (`de_AT`, `fr_CA`, ...).
const REGIONS: &[&str] = &[
    "AT", "CA", "CH", "BE", "MX", "AR", "AU", "GB", "IN", "IE", "NZ", "ZA", "US", "LU", "CL", "CO",
    "PE", "UY", "VE", "EC", "BO", "PY", "CR", "DO", "GT", "HN", "NI", "PA", "PR", "SV", "PT", "ES",
    "DE",
];

/// `n` distinct locale codes and, for each, its row in [`LOCALES`]: the
/// table's codes first, then `language_REGION` codes of the table's
/// languages (then with `@vK` modifiers): the same `n` first codes
/// whatever the total.
pub(super) fn locale_codes(n: usize) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = LOCALES
        .iter()
        .enumerate()
        .take(n)
        .map(|(i, l)| (l.0.to_string(), i))
        .collect();
    let mut seen: std::collections::HashSet<String> =
        LOCALES.iter().map(|l| l.0.to_string()).collect();
    let bases: Vec<usize> = (0..LOCALES.len())
        .filter(|&i| !LOCALES[i].0.contains('_'))
        .collect();
    let mut k = 0usize;
    while out.len() < n {
        let b = bases[k % bases.len()];
        let region = REGIONS[(k / bases.len()) % REGIONS.len()];
        let round = k / (bases.len() * REGIONS.len());
        let mut code = format!("{}_{region}", LOCALES[b].0);
        if round > 0 {
            code.push_str(&format!("@v{round}"));
        }
        if seen.insert(code.clone()) {
            out.push((code, b));
        }
        k += 1;
    }
    out
}

/// A made-up person: (name, e-mail).
fn person(rng: &mut Rng) -> (String, String) {
    let mut part = |lo, hi| {
        let mut s = String::new();
        for _ in 0..rng.range(lo, hi) {
            let (c, v) = Script::Latin.letters();
            s.push(c.as_bytes()[rng.below(c.len() as u64) as usize] as char);
            s.push(v.as_bytes()[rng.below(v.len() as u64) as usize] as char);
        }
        let mut n = s[..1].to_uppercase();
        n.push_str(&s[1..]);
        n
    };
    let (first, last) = (part(2, 3), part(2, 4));
    let mail = format!(
        "{}.{}@example.org",
        first.to_lowercase(),
        last.to_lowercase()
    );
    (format!("{first} {last}"), mail)
}

/// One locale of the repository: its alphabet and its habits.
pub(super) struct Locale {
    pub(super) code: String,
    script: Script,
    pub(super) plural: Plural,
    consonants: Vec<char>,
    vowels: Vec<char>,
    accents: Vec<char>,
    /// Key of everything this locale draws (`mix`).
    pub(super) key: u64,
    /// Bytes of translation per byte of English.
    verbosity: f64,
    /// Fraction of the entries untranslated at the first release.
    pub(super) untranslated: f64,
    /// Translators: name, e-mail, release they joined at.
    pub(super) translators: Vec<(String, String, usize)>,
}

impl Locale {
    pub(super) fn new(code: &str, row: usize, spec: &Catalogs) -> Locale {
        let (_, script, plural, accents) = LOCALES[row];
        let key = mix(&[spec.seed, str_key(code)]);
        let mut rng = Rng::new(key);
        let (c, v) = script.letters();
        let verbosity = 0.9 + 0.6 * unit(rng.next_u64());
        let untranslated = 0.10 + 0.15 * unit(rng.next_u64());
        let mut translators = Vec::new();
        for r in 0..spec.releases.max(1) {
            let joining = if r == 0 {
                rng.range(1, 4)
            } else {
                rng.below(3) / 2
            };
            for _ in 0..joining {
                let (name, mail) = person(&mut rng);
                translators.push((name, mail, r));
            }
        }
        Locale {
            code: code.to_string(),
            script,
            plural,
            consonants: c.chars().collect(),
            vowels: v.chars().collect(),
            accents: accents.chars().collect(),
            key,
            verbosity,
            untranslated,
            translators,
        }
    }

    fn pick(rng: &mut Rng, set: &[char]) -> char {
        set[rng.below(set.len() as u64) as usize]
    }

    /// One syllable of this locale's made-up language.
    fn syllable(&self, rng: &mut Rng, out: &mut String) {
        let code = |lo: u32, n: u64, rng: &mut Rng| {
            char::from_u32(lo + rng.below(n) as u32).unwrap_or('?')
        };
        match self.script {
            Script::Han => out.push(code(0x4e00, 0x5000, rng)),
            Script::Hangul => out.push(code(0xac00, 11_172, rng)),
            Script::Kana if rng.below(3) == 0 => out.push(code(0x4e00, 0x5000, rng)),
            Script::Kana => out.push(code(0x3041, 0x56, rng)),
            _ => {
                out.push(Self::pick(rng, &self.consonants));
                if !self.accents.is_empty() && rng.below(5) == 0 {
                    out.push(Self::pick(rng, &self.accents));
                } else {
                    out.push(Self::pick(rng, &self.vowels));
                }
            }
        }
    }

    /// This locale's word for the English `w` (`variant` picks one of its
    /// synonyms): the same word gets the same translation, about
    /// `verbosity` times its length in bytes.
    fn word(&self, w: &str, variant: u64, out: &mut String) {
        let mut rng = Rng::new(mix(&[self.key, str_key(&w.to_lowercase()), variant]));
        let target = (w.len() as f64 * self.verbosity * (0.6 + 0.8 * unit(rng.next_u64())))
            .round()
            .max(1.0) as usize;
        let mut t = String::new();
        while t.len() < target {
            self.syllable(&mut rng, &mut t);
        }
        if self.script.cased() && w.starts_with(|c: char| c.is_uppercase()) {
            let mut cs = t.chars();
            if let Some(f) = cs.next() {
                out.extend(f.to_uppercase());
                out.push_str(cs.as_str());
                return;
            }
        }
        out.push_str(&t);
    }

    /// `text` in this locale's made-up language: words replaced, placeholders
    /// (`%(name)s`), quotes, punctuation and newlines kept. `salt` (the entry
    /// and its revision) varies the choice of synonyms.
    pub(super) fn translate(&self, text: &str, salt: u64) -> String {
        let mut out = String::with_capacity(text.len() * 2);
        let mut prev_kept = true;
        for (i, tok) in text.split(' ').enumerate() {
            let kept = tok.contains('%') || tok.contains('{');
            // Chinese, Japanese and Thai: a space now and then (phrases,
            // placeholders), not between words.
            let phrase = mix(&[salt, i as u64, 1]).is_multiple_of(4);
            if i > 0 && (self.script.spaced() || kept || prev_kept || phrase) {
                out.push(' ');
            }
            prev_kept = kept;
            if kept {
                out.push_str(tok);
                continue;
            }
            let core = tok.trim_start_matches('“');
            out.push_str(&tok[..tok.len() - core.len()]);
            let word = core.trim_end_matches(['.', ',', ':', '?', '!', '\n', '”']);
            if !word.is_empty() {
                self.word(
                    word,
                    mix(&[salt, i as u64]).is_multiple_of(4) as u64,
                    &mut out,
                );
            }
            out.push_str(&core[word.len()..]);
        }
        out
    }
}
