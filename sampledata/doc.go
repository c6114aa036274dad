// Package sampledata embeds real, public data sets for tests, the demo and
// benchmarks, and loads them into a database.
//
//   - "pums": the US Census PUMS sample shipped with the OpenDP SmartNoise SDK
//     (PUMS_dup.csv, 1,948 rows, several rows per person id pid; MIT licence),
//     and "pums_person", the same people one row each (PUMS_pid.csv, 1,000
//     rows), to join with pums on pid.
//   - "adult": the training split of UCI Adult (Becker & Kohavi 1996, 32,561 rows;
//     CC BY 4.0). The test split is available unparsed through AdultTest.
//
// The files are stored gzipped and otherwise unchanged; data/SOURCES.md gives the
// sources and licences.
//
// Values are typed as int64, float64 or string. Adult's values are trimmed of the
// leading space the original files keep after each comma. Adult's missing values
// are kept as the string "?" (in workclass, occupation and native_country): they are
// not NULL, so a policy that declares public categories (AdultCategories) must list
// "?" too if it wants those rows in a GROUP BY answer.
package sampledata
