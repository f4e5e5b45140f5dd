//! The one font of the PDF (DejaVu Sans, embedded in the binary): measuring
//! text, encoding it as glyph ids, and writing the subset a document used
//! as a PDF/A-conforming CID font.
//!
//! Invariants: every glyph shown is in the font — a character the font
//! lacks is shown as `?`, never as `.notdef` (PDF/A forbids references to
//! it); the CIDs in the content are the subset's glyph ids (CIDToGIDMap
//! Identity), and the `/W` widths are the subset's advances in 1/1000 em,
//! so a viewer and the embedded program agree; every glyph maps back to
//! its character (`/ToUnicode`), so the text can be searched and copied;
//! the same text gives the same bytes.
//!
//! Speed: the glyphs of Latin text (ASCII, Latin-1, Latin Extended-A and
//! the common punctuation) form a base subset, subset and compressed once
//! per process; a document whose text stays within it embeds that program
//! as is, and one that needs more glyphs gets its own subset, the base
//! glyphs first so their ids do not move.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap};
use pdf_writer::{Chunk, Filter, Finish, Name, Rect, Ref, Str};
use subsetter::GlyphRemapper;

use super::PdfError;

/// The font program (DejaVu Sans 2.37, Bitstream Vera licence:
/// `core/assets/fonts/LICENSE-DejaVu.txt`).
static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The font's PostScript name.
const BASE_NAME: &str = "DejaVuSans";

/// The characters of the base subset.
pub(super) fn base_chars() -> impl Iterator<Item = char> {
    ('\u{20}'..='\u{7e}')
        .chain('\u{a0}'..='\u{17f}')
        .chain("€–—‘’‚“”„…•·‹›™№−".chars())
}

/// The base subset: its glyph ids, and its program, compressed.
struct Base {
    remapper: GlyphRemapper,
    program: Vec<u8>,
    program_len: usize,
}

fn base(face: &ttf_parser::Face<'static>) -> Result<&'static Base, PdfError> {
    static BASE: OnceLock<Result<Base, PdfError>> = OnceLock::new();
    BASE.get_or_init(|| {
        let mut remapper = GlyphRemapper::new();
        remapper.remap(0);
        for c in base_chars() {
            if let Some(g) = face.glyph_index(c) {
                remapper.remap(g.0);
            }
        }
        let program = subsetter::subset(DEJAVU_SANS, 0, &remapper)
            .map_err(|e| PdfError::Font(format!("subsetting failed: {e}")))?;
        Ok(Base {
            program_len: program.len(),
            program: miniz_oxide::deflate::compress_to_vec_zlib(&program, 6),
            remapper,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The font as a document uses it: the glyphs shown so far, in the order
/// first shown.
pub struct Font {
    face: ttf_parser::Face<'static>,
    units_per_em: f32,
    remapper: GlyphRemapper,
    /// Subset glyph id → the character it shows.
    chars: BTreeMap<u16, char>,
    /// The original glyph id of `?`, for characters the font lacks.
    fallback: u16,
}

impl Font {
    /// The embedded font, nothing shown yet.
    pub fn new() -> Result<Font, PdfError> {
        let face = ttf_parser::Face::parse(DEJAVU_SANS, 0)
            .map_err(|e| PdfError::Font(format!("the embedded font does not parse: {e}")))?;
        let fallback = face
            .glyph_index('?')
            .ok_or_else(|| PdfError::Font("the embedded font has no `?`".into()))?
            .0;
        // Glyph 0 (.notdef) stays glyph 0 of the subset and is never shown;
        // the base glyphs follow, then any other the document shows.
        let base = base(&face)?;
        let remapper = base.remapper.clone();
        Ok(Font {
            units_per_em: f32::from(face.units_per_em()),
            face,
            remapper,
            chars: BTreeMap::new(),
            fallback,
        })
    }

    /// The glyph of a character in the full font (`?` when it has none).
    fn glyph(&self, c: char) -> (u16, char) {
        match self.face.glyph_index(c) {
            Some(g) if g.0 != 0 => (g.0, c),
            _ => (self.fallback, '?'),
        }
    }

    /// The width of `text` at `size` points.
    pub fn width(&self, text: &str, size: f32) -> f32 {
        self.points(self.units(text), size)
    }

    /// The advance of `text` in font units: the sum of its characters'
    /// ([`Font::char_units`]), so a line's width can be kept as it grows.
    pub fn units(&self, text: &str) -> u32 {
        text.chars().map(|c| self.char_units(c)).sum()
    }

    /// The advance of one character in font units (0 for a control
    /// character, which is not shown).
    pub fn char_units(&self, c: char) -> u32 {
        if c.is_control() {
            return 0;
        }
        u32::from(
            self.face
                .glyph_hor_advance(ttf_parser::GlyphId(self.glyph(c).0))
                .unwrap_or(0),
        )
    }

    /// `units` font units in points at `size`.
    pub fn points(&self, units: u32, size: f32) -> f32 {
        units as f32 * size / self.units_per_em
    }

    /// `text` as the content stream shows it: the subset's glyph ids, two
    /// bytes each (Identity-H). Control characters are left out.
    pub fn encode(&mut self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() * 2);
        for c in text.chars().filter(|c| !c.is_control()) {
            let (glyph, shown) = self.glyph(c);
            let cid = self.remapper.remap(glyph);
            self.chars.entry(cid).or_insert(shown);
            out.extend_from_slice(&cid.to_be_bytes());
        }
        out
    }

    /// Writes the font (Type0 → CIDFontType2 → descriptor → subset
    /// program, and its ToUnicode map) at `type0`, allocating the rest
    /// from `next`.
    pub fn write(
        &self,
        chunk: &mut Chunk,
        type0: Ref,
        next: &mut impl FnMut() -> Ref,
    ) -> Result<(), PdfError> {
        let cid_ref = next();
        let descriptor_ref = next();
        let program_ref = next();
        let cmap_ref = next();

        let base = base(&self.face)?;
        let own;
        let (compressed, program_len) = if self.remapper.num_gids() == base.remapper.num_gids() {
            (&base.program, base.program_len)
        } else {
            let program = subsetter::subset(DEJAVU_SANS, 0, &self.remapper)
                .map_err(|e| PdfError::Font(format!("subsetting failed: {e}")))?;
            own = miniz_oxide::deflate::compress_to_vec_zlib(&program, 6);
            (&own, program.len())
        };
        // The subset's name: a tag of six capitals naming the glyph set.
        let mut tag = String::with_capacity(6 + 1 + BASE_NAME.len());
        let mut h: u32 = 2166136261;
        for g in self.remapper.remapped_gids() {
            for b in g.to_be_bytes() {
                h = (h ^ u32::from(b)).wrapping_mul(16777619);
            }
        }
        for i in 0..6 {
            tag.push(char::from(b'A' + ((h >> (i * 5)) % 26) as u8));
        }
        tag.push('+');
        tag.push_str(BASE_NAME);
        let name = Name(tag.as_bytes());

        let system_info = SystemInfo {
            registry: Str(b"Adobe"),
            ordering: Str(b"Identity"),
            supplement: 0,
        };

        chunk
            .type0_font(type0)
            .base_font(name)
            .encoding_predefined(Name(b"Identity-H"))
            .descendant_font(cid_ref)
            .to_unicode(cmap_ref);

        let scale = 1000.0 / self.units_per_em;
        let widths: Vec<f32> = self
            .remapper
            .remapped_gids()
            .map(|g| {
                let advance = self
                    .face
                    .glyph_hor_advance(ttf_parser::GlyphId(g))
                    .unwrap_or(0);
                (f32::from(advance) * scale).round()
            })
            .collect();
        let mut cid = chunk.cid_font(cid_ref);
        cid.subtype(CidFontType::Type2)
            .base_font(name)
            .system_info(system_info)
            .font_descriptor(descriptor_ref)
            .default_width(0.0)
            .cid_to_gid_map_predefined(Name(b"Identity"));
        cid.widths().consecutive(0, widths);
        cid.finish();

        let bbox = self.face.global_bounding_box();
        let s = |v: i16| f32::from(v) * scale;
        chunk
            .font_descriptor(descriptor_ref)
            .name(name)
            .flags(FontFlags::NON_SYMBOLIC)
            .bbox(Rect::new(
                s(bbox.x_min),
                s(bbox.y_min),
                s(bbox.x_max),
                s(bbox.y_max),
            ))
            .italic_angle(0.0)
            .ascent(s(self.face.ascender()))
            .descent(s(self.face.descender()))
            .cap_height(s(self
                .face
                .capital_height()
                .unwrap_or(self.face.ascender())))
            .stem_v(80.0)
            .font_file2(program_ref);

        chunk
            .stream(program_ref, compressed)
            .filter(Filter::FlateDecode)
            .pair(Name(b"Length1"), program_len as i32);

        let mut cmap = UnicodeCmap::new(Name(b"Custom"), system_info);
        for (&cid, &c) in &self.chars {
            cmap.pair(cid, c);
        }
        let cmap = cmap.finish();
        chunk.cmap(cmap_ref, &cmap);
        Ok(())
    }
}
