"""Text and entities: normalisation and similarity (``normalize``), words, CJK runs and stopwords (``words``), entity
extraction (``entities`` for claims and answers, ``question`` for the entities a question names), the one vocabulary
model (``vocabulary``), the one time parser (``times``) and the zh/en phrase lists (``phrases``) that the rules, the
composer input and the guard share."""
