"""The assignment app: crowdsourcing task assignment (the numeric core is in ``engine``)."""
