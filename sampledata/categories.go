package sampledata

// AdultCategories lists, for each categorical column of the "adult" table, the
// public categories that the data set's description (adult.names, Becker & Kohavi
// 1996) declares, in its order. They are public knowledge, not derived from the
// rows, so a DP policy may release every one of them as a GROUP BY key without
// partition selection.
//
// The data holds one value outside these lists: the missing-value marker "?"
// (train split: workclass 1,836 rows, occupation 1,843, native_country 583).
// The test split (AdultTest) also writes income with a trailing period (">50K.").
var AdultCategories = map[string][]string{
	"workclass": {"Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
		"State-gov", "Without-pay", "Never-worked"},
	"education": {"Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
		"Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
		"5th-6th", "Preschool"},
	"marital_status": {"Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
		"Married-spouse-absent", "Married-AF-spouse"},
	"occupation": {"Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
		"Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
		"Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
		"Armed-Forces"},
	"relationship": {"Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"},
	"race":         {"White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"},
	"sex":          {"Female", "Male"},
	"native_country": {"United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
		"Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
		"Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
		"Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
		"Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
		"Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"},
	"income": {">50K", "<=50K"},
}
