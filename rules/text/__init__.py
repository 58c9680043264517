"""Text and entities: normalisation and similarity (``normalize``), words, CJK runs and stopwords (``words``), entity
extraction (``entities``) and the zh/en phrase lists (``phrases``) that the rules, the composer input and the guard
share."""
