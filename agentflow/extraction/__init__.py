"""What makes extracted data trustworthy: grounding (markers, span location),
chunking and merging of long documents, the record shape, the review page."""
