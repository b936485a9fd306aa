// unicat_dump.mjs -- print Unicode 6.1.0's General_Category as "CODE first last" ranges, read
// from the @unicode/unicode-6.1.0 package (the UCD's UnicodeData.txt as JavaScript data).
// Usage: node tools/fts5/unicat_dump.mjs PACKAGE_DIR > ranges.txt (see unicat_gen.py).
const names = {
  Lu: 'Uppercase_Letter', Ll: 'Lowercase_Letter', Lt: 'Titlecase_Letter', Lm: 'Modifier_Letter',
  Lo: 'Other_Letter', Mn: 'Nonspacing_Mark', Mc: 'Spacing_Mark', Me: 'Enclosing_Mark',
  Nd: 'Decimal_Number', Nl: 'Letter_Number', No: 'Other_Number', Pc: 'Connector_Punctuation',
  Pd: 'Dash_Punctuation', Ps: 'Open_Punctuation', Pe: 'Close_Punctuation',
  Pi: 'Initial_Punctuation', Pf: 'Final_Punctuation', Po: 'Other_Punctuation',
  Sm: 'Math_Symbol', Sc: 'Currency_Symbol', Sk: 'Modifier_Symbol', So: 'Other_Symbol',
  Zs: 'Space_Separator', Zl: 'Line_Separator', Zp: 'Paragraph_Separator', Cc: 'Control',
  Cf: 'Format', Cs: 'Surrogate', Co: 'Private_Use', Cn: 'Unassigned',
};
const dir = process.argv[2];
for (const [code, name] of Object.entries(names)) {
  const mod = await import(`${dir}/General_Category/${name}/ranges.mjs`);
  for (const r of mod.default) console.log(code, r.begin, r.end - 1);
}
