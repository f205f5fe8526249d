import test_project_flow_unseen6 as m
F = dict(m.DJANGO_TRIAGE_CLEAN)
F["support/prompts.py"] = F["support/prompts.py"].replace("from django.utils import timezone", "from datetime import datetime as timezone")
G = dict(F); G["support/prompts.py"] = F["support/prompts.py"].replace('{subject}\\n\\n{body}\\n\\n', '')
H = dict(F); H["support/prompts.py"] = F["support/prompts.py"].replace('{"role": "system", "content": TRIAGE_RULES},', '{"role": "system", "content": TRIAGE_RULES + "x"},')
