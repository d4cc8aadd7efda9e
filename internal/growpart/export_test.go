package growpart

// Grow is Plan and then Write.
func Grow(d Disk, num int) (*Change, error) {
	c, err := Plan(d, num)
	if err != nil {
		return nil, err
	}
	return c, c.Write()
}
