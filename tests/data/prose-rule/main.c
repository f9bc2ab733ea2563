/* List the minutes of the planning group, oldest first. */
#include <stdio.h>

/* This folder holds the minutes of the planning group for the [...] */
static int step0(void)
{
  return 0;
}

/* The group met every second Tuesday in the small room next to the [...] */
static int step1(void)
{
  return 1;
}

/* Most of the discussion concerned the new timetable. Several [...] */
static int step2(void)
{
  return 2;
}

/* Budget questions were left to the finance committee, which will [...] */
static int step3(void)
{
  return 3;
}

/* If something in these notes is wrong, please say so at the next [...] */
static int step4(void)
{
  return 4;
}

int main(void)
{
  puts("minutes");
  return 0;
}
