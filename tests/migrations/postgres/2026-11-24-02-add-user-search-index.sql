-- up


-- down

