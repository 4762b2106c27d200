//! An XLSX workbook's text as Cline's `extractTextFromExcel` (exceljs) gives it: for each sheet
//! not hidden, `--- Sheet: NAME ---`, then each row with content as its cells' values joined by
//! tabs (from column A to the row's last cell), a blank line after each sheet, the whole trimmed.
//! Values: numbers as JavaScript writes them, dates (a number with a date format) as
//! `YYYY-MM-DD`, booleans `true`/`false`, errors `[Error: #N/A]`, a formula its cached result
//! (or `[Formula: …]` without one), shared and inline strings (rich text joined).

use std::collections::HashMap;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::zipped::Archive;

/// exceljs stops a sheet after this row number.
const MAX_ROW: u64 = 50_000;

/// The workbook's text.
pub(crate) fn text(bytes: &[u8]) -> Result<String, String> {
    let mut zip = Archive::open(bytes)?;
    let workbook = zip.text("xl/workbook.xml")?.ok_or("xl/workbook.xml is missing")?;
    let rels = zip.text("xl/_rels/workbook.xml.rels")?.unwrap_or_default();
    let shared = shared_strings(&zip.text("xl/sharedStrings.xml")?.unwrap_or_default())?;
    let dates = date_styles(&zip.text("xl/styles.xml")?.unwrap_or_default())?;
    let (sheets, date1904) = sheets(&workbook)?;
    let targets = relationships(&rels)?;
    let mut out = String::new();
    for s in sheets {
        if s.state == "hidden" || s.state == "veryHidden" {
            continue;
        }
        let Some(target) = targets.get(&s.rid) else { continue };
        let path = match target.strip_prefix('/') {
            Some(abs) => abs.to_string(),
            None => format!("xl/{target}"),
        };
        let Some(xml) = zip.text(&path)? else { continue };
        out.push_str(&format!("--- Sheet: {} ---\n", s.name));
        rows(&xml, &shared, &dates, date1904, &mut out)?;
        out.push('\n');
    }
    Ok(out.trim_matches(parser_core::is_js_whitespace).to_string())
}

struct Sheet {
    name: String,
    rid: String,
    state: String,
}

fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| a.unescape_value().ok())
        .map(|v| v.into_owned())
}

fn sheets(xml: &str) -> Result<(Vec<Sheet>, bool), String> {
    let mut r = Reader::from_str(xml);
    let (mut out, mut date1904) = (Vec::new(), false);
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"sheet" => out.push(Sheet {
                    name: attr(&e, b"name").unwrap_or_default(),
                    rid: attr(&e, b"r:id").unwrap_or_default(),
                    state: attr(&e, b"state").unwrap_or_default(),
                }),
                b"workbookPr" => date1904 = matches!(attr(&e, b"date1904").as_deref(), Some("1" | "true")),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((out, date1904))
}

fn relationships(xml: &str) -> Result<HashMap<String, String>, String> {
    let mut r = Reader::from_str(xml);
    let mut out = HashMap::new();
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"Relationship" => {
                if let (Some(id), Some(t)) = (attr(&e, b"Id"), attr(&e, b"Target")) {
                    out.insert(id, t);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// The shared strings: each `si`'s text, its runs joined (phonetic runs left out).
fn shared_strings(xml: &str) -> Result<Vec<String>, String> {
    let mut r = Reader::from_str(xml);
    let (mut out, mut cur, mut in_t, mut in_rph) = (Vec::new(), String::new(), false, false);
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => match e.local_name().as_ref() {
                b"si" => cur.clear(),
                b"t" => in_t = true,
                b"rPh" => in_rph = true,
                _ => {}
            },
            Event::Empty(e) if e.local_name().as_ref() == b"si" => out.push(String::new()),
            Event::End(e) => match e.local_name().as_ref() {
                b"si" => out.push(std::mem::take(&mut cur)),
                b"t" => in_t = false,
                b"rPh" => in_rph = false,
                _ => {}
            },
            Event::Text(t) if in_t && !in_rph => cur.push_str(&t.unescape().map_err(|e| e.to_string())?),
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// Which cell styles (`cellXfs` indexes) format a number as a date, as exceljs decides it.
fn date_styles(xml: &str) -> Result<Vec<bool>, String> {
    let mut r = Reader::from_str(xml);
    let mut custom: HashMap<u32, bool> = HashMap::new();
    let (mut out, mut in_xfs) = (Vec::new(), false);
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"numFmt" => {
                    if let (Some(id), Some(code)) = (attr(&e, b"numFmtId"), attr(&e, b"formatCode")) {
                        custom.insert(id.parse().unwrap_or(0), is_date_format(&code));
                    }
                }
                b"cellXfs" => in_xfs = true,
                b"xf" if in_xfs => {
                    let id: u32 = attr(&e, b"numFmtId").and_then(|v| v.parse().ok()).unwrap_or(0);
                    out.push(custom.get(&id).copied().unwrap_or(matches!(id, 14..=22 | 27..=36 | 45..=47 | 50..=58)));
                }
                _ => {}
            },
            Event::End(e) if e.local_name().as_ref() == b"cellXfs" => in_xfs = false,
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// exceljs's `isDateFmt`: after removing quoted text and `[…]` parts, a `d`, `m`, `y`, `h` or
/// `s` is left.
fn is_date_format(code: &str) -> bool {
    let (mut quoted, mut bracket, mut escaped) = (false, false, false);
    for c in code.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' if !quoted => bracket = true,
            ']' if !quoted => bracket = false,
            c if !quoted && !bracket && matches!(c.to_ascii_lowercase(), 'd' | 'm' | 'y' | 'h' | 's') => return true,
            _ => {}
        }
    }
    false
}

/// One cell as read.
#[derive(Default)]
struct Cell {
    col: usize,
    kind: String,
    style: usize,
    value: Option<String>,
    formula: Option<String>,
    inline: String,
}

fn column(reference: &str) -> usize {
    reference
        .bytes()
        .take_while(u8::is_ascii_alphabetic)
        .fold(0, |n, b| n * 26 + (b.to_ascii_uppercase() - b'A' + 1) as usize)
}

fn rows(xml: &str, shared: &[String], dates: &[bool], date1904: bool, out: &mut String) -> Result<(), String> {
    let mut r = Reader::from_str(xml);
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<Cell> = None;
    let (mut in_v, mut in_f, mut in_t) = (false, false, false);
    let mut row_number = 0u64;
    let mut next_col = 1usize;
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => match e.local_name().as_ref() {
                b"row" => {
                    row.clear();
                    next_col = 1;
                    row_number = attr(&e, b"r").and_then(|v| v.parse().ok()).unwrap_or(row_number + 1);
                    if row_number > MAX_ROW {
                        out.push_str(&format!("[... truncated at row {row_number} ...]\n"));
                        return Ok(());
                    }
                }
                b"c" => cell = Some(start_cell(&e, &mut next_col)),
                b"v" => in_v = true,
                b"f" => in_f = true,
                b"t" => in_t = true,
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                b"c" => {
                    let c = start_cell(&e, &mut next_col);
                    place(&mut row, c.col, String::new());
                }
                b"row" => {
                    row_number = attr(&e, b"r").and_then(|v| v.parse().ok()).unwrap_or(row_number + 1);
                }
                _ => {}
            },
            Event::Text(t) => {
                let s = t.unescape().map_err(|e| e.to_string())?;
                if let Some(c) = cell.as_mut() {
                    if in_v {
                        c.value.get_or_insert_with(String::new).push_str(&s);
                    } else if in_f {
                        c.formula.get_or_insert_with(String::new).push_str(&s);
                    } else if in_t {
                        c.inline.push_str(&s);
                    }
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"v" => in_v = false,
                b"f" => in_f = false,
                b"t" => in_t = false,
                b"c" => {
                    if let Some(c) = cell.take() {
                        let text = format_cell(&c, shared, dates, date1904);
                        place(&mut row, c.col, text);
                    }
                }
                b"row" if row.iter().any(|t| !t.trim_matches(parser_core::is_js_whitespace).is_empty()) => {
                    out.push_str(&row.join("\t"));
                    out.push('\n');
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(())
}

fn start_cell(e: &BytesStart<'_>, next_col: &mut usize) -> Cell {
    let col = attr(e, b"r").map(|r| column(&r)).filter(|&c| c > 0).unwrap_or(*next_col);
    *next_col = col + 1;
    Cell {
        col,
        kind: attr(e, b"t").unwrap_or_default(),
        style: attr(e, b"s").and_then(|v| v.parse().ok()).unwrap_or(0),
        ..Cell::default()
    }
}

/// Puts a cell's text at its column (1-based), filling the columns before it with empty cells.
fn place(row: &mut Vec<String>, col: usize, text: String) {
    // A malformed column far to the right would otherwise allocate without end.
    let col = col.min(16_384);
    if row.len() < col {
        row.resize(col, String::new());
    }
    row[col - 1] = text;
}

fn format_cell(c: &Cell, shared: &[String], dates: &[bool], date1904: bool) -> String {
    let value = c.value.as_deref();
    let result = match c.kind.as_str() {
        "s" => value.and_then(|v| v.trim().parse::<usize>().ok()).and_then(|i| shared.get(i)).cloned(),
        "inlineStr" => Some(c.inline.clone()),
        "str" => value.map(str::to_string),
        "b" => value.map(|v| if v.trim() == "1" { "true" } else { "false" }.to_string()),
        "e" => value.map(|v| format!("[Error: {v}]")),
        _ => value.and_then(|v| v.trim().parse::<f64>().ok()).map(|n| {
            if dates.get(c.style).copied().unwrap_or(false) {
                date(n, date1904)
            } else {
                super::js_number(n)
            }
        }),
    };
    match (result, &c.formula) {
        (Some(r), _) => r,
        (None, Some(f)) => format!("[Formula: {f}]"),
        (None, None) => String::new(),
    }
}

/// exceljs's `excelToDate` then `toISOString().split("T")[0]`.
fn date(serial: f64, date1904: bool) -> String {
    let offset = if date1904 { 24107.0 } else { 25569.0 };
    let ms = ((serial - offset) * 86_400_000.0).round();
    let days = (ms / 86_400_000.0).floor() as i64;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to a proleptic Gregorian date.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_columns_and_formats() {
        assert_eq!(date(45292.0, false), "2024-01-01");
        assert_eq!(date(45292.75, false), "2024-01-01");
        assert_eq!(column("AB12"), 28);
        assert!(is_date_format("yyyy-mm-dd") && is_date_format("[$-409]d-mmm") && !is_date_format("0.00"));
        assert!(!is_date_format("\"day\" 0") && !is_date_format("[Red]0.0"));
    }

    #[test]
    fn a_sheet_row_by_row() {
        let xml = r#"<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1"><v>2.5</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row><row r="3"><c r="B3"><f>A1*2</f><v>4</v></c><c r="C3" t="e"><v>#DIV/0!</v></c><c r="D3" t="b"><v>1</v></c><c r="E3"><f>X()</f></c></row></sheetData></worksheet>"#;
        let mut out = String::new();
        rows(xml, &["Name".into(), "   ".into()], &[], false, &mut out).unwrap();
        assert_eq!(out, "Name\t\t2.5\n\t4\t[Error: #DIV/0!]\ttrue\t[Formula: X()]\n");
    }
}
