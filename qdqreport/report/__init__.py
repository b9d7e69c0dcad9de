"""The report model: everything a report shows, as plain frozen data built from a bundle and the rule results.

model.py builds the ReportModel (the verdict, the findings in rank order, the comparison); each
section has its own module (sections.py, engine.py, layers.py, task.py, fp16.py), and
config_card.py builds the configuration card. Nothing here renders text: render/ turns these
models into HTML, Markdown and JSON, and qdqreport/pipeline.py runs bundle -> rules -> model -> files.
"""
