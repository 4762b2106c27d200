#!/usr/bin/env python3
"""Writes the document fixtures of agent-min/tests/fixtures/documents/ with real generators.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install python-docx openpyxl fpdf2 nbformat
    /tmp/venv/bin/python agent-min/scripts/make-document-fixtures.py

python-docx, openpyxl, fpdf2 and nbformat are the libraries people use to write these formats
(Word/Excel-compatible OOXML, PDF from fpdf2 and ReportLab, Jupyter's own nbformat); nothing here is our own writer.
"""
import datetime
import os
import sys

import docx
import fpdf
import nbformat
import openpyxl
from reportlab.pdfgen import canvas

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "documents")
os.makedirs(out, exist_ok=True)

# DOCX: headings, paragraphs, a tab, a table, a bold run in a paragraph.
d = docx.Document()
d.add_heading("Quarterly report", level=1)
p = d.add_paragraph("Revenue rose ")
p.add_run("12 %").bold = True
p.add_run(" in Q3.")
d.add_paragraph("Item\tValue")
t = d.add_table(rows=2, cols=2)
t.cell(0, 0).text, t.cell(0, 1).text = "Region", "Sales"
t.cell(1, 0).text, t.cell(1, 1).text = "Nord", "1 200 €"
d.add_paragraph("Done.")
d.core_properties.created = datetime.datetime(2024, 1, 1)
d.core_properties.modified = datetime.datetime(2024, 1, 1)
d.save(os.path.join(out, "report.docx"))

# XLSX: strings, numbers, a float, a date, a boolean, a formula with no cached value, an empty
# row, a hidden sheet.
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Sales"
ws.append(["Region", "Units", "Price", "Date", "Paid"])
ws.append(["Nord", 12, 2.5, datetime.date(2024, 3, 1), True])
ws.append(["Süd", 7, 0.1, datetime.date(2023, 12, 31), False])
ws.append([])
ws.append(["Total", "=SUM(B2:B3)"])
hidden = wb.create_sheet("Secret")
hidden.append(["hidden value"])
hidden.sheet_state = "hidden"
notes = wb.create_sheet("Notes")
notes["B2"] = "only B2"
wb.properties.created = datetime.datetime(2024, 1, 1)
wb.properties.modified = datetime.datetime(2024, 1, 1)
wb.save(os.path.join(out, "sales.xlsx"))

# PDF: two pages of text with a core font.
pdf = fpdf.FPDF()
pdf.set_creation_date(datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc))
pdf.set_font("helvetica", size=12)
pdf.add_page()
pdf.cell(text="Hello from page one.")
pdf.ln()
pdf.cell(text="Second line.")
pdf.add_page()
pdf.cell(text="Page two says goodbye.")
pdf.output(os.path.join(out, "two-pages.pdf"))

# PDF by ReportLab (invariant: no timestamps or random ids).
c = canvas.Canvas(os.path.join(out, "reportlab.pdf"), invariant=1)
c.drawString(72, 770, "Invoice 2024-001")
c.drawString(72, 750, "Total due: 1,234.50 EUR")
c.showPage()
c.drawString(72, 770, "Thank you.")
c.showPage()
c.save()

# Notebook: markdown and code cells with outputs, as Jupyter writes them.
nb = nbformat.v4.new_notebook()
nb.cells = [
    nbformat.v4.new_markdown_cell("# Analysis\nLoad the data."),
    nbformat.v4.new_code_cell("x = 1 + 1\nprint(x)", execution_count=1,
                              outputs=[nbformat.v4.new_output("stream", name="stdout", text="2\n")]),
    nbformat.v4.new_code_cell("x * 2", execution_count=2,
                              outputs=[nbformat.v4.new_output("execute_result", data={"text/plain": "4"}, execution_count=2)]),
]
for i, c in enumerate(nb.cells):
    c["id"] = f"cell-{i}"
nbformat.write(nb, os.path.join(out, "analysis.ipynb"))

# Legacy encodings: Latin-1 (ISO-8859-1) French, Windows-1252 quotes, UTF-16 with a BOM.
with open(os.path.join(out, "latin1.txt"), "wb") as f:
    f.write("Le café et la crème brûlée sont très appréciés à Genève.\n".encode("latin-1"))
with open(os.path.join(out, "cp1252.txt"), "wb") as f:
    f.write("\u201cSmart quotes\u201d cost 5 \u20ac \u2014 déjà vu.\n".encode("cp1252"))
with open(os.path.join(out, "utf16.txt"), "wb") as f:
    f.write("Grüße aus Köln\n".encode("utf-16"))
print("written to", os.path.normpath(out), file=sys.stderr)
