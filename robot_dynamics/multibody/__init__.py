"""The robot as data: joint types, the description a parser fills, the constant Model and its
Data workspace, mimic coupling, units."""
